"""Parsers and matchers are imported when a file or rule needs them: the tables that say where each lives are
complete, and a scan of CUDA files leaves the Python and manifest code (and packaging) unimported."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import migrate.matchers
import migrate.parse
from migrate.matchers import MATCHER_MODULES
from migrate.parse import PARSER_MODULES
from migrate.parse.document import _PARSERS


def test_every_matcher_is_found_where_the_table_says() -> None:
    for info in pkgutil.iter_modules(migrate.matchers.__path__):
        importlib.import_module(f"migrate.matchers.{info.name}")
    registered = {name: matcher.function.__module__ for name, matcher in migrate.matchers._REGISTRY.items()}
    assert registered == {name: f"migrate.matchers.{module}" for name, module in MATCHER_MODULES.items()}


def test_every_parser_is_found_where_the_table_says() -> None:
    for info in pkgutil.iter_modules(migrate.parse.__path__):
        importlib.import_module(f"migrate.parse.{info.name}")
    registered = {kind: parser.__module__ for kind, parser in _PARSERS.items()}
    assert registered == {kind: f"migrate.parse.{module}" for kind, module in PARSER_MODULES.items()}


SCAN_CUDA = """
import sys
from pathlib import Path
from migrate.config import load_settings
from migrate.scan import scan
result = scan(Path(sys.argv[1]), load_settings(Path(sys.argv[1]), {"cache_dir": sys.argv[2]}), substitutions=False)
print(len(result.findings))
for name in ("packaging", "multiprocessing", "migrate.parse.python", "migrate.matchers.python_code",
             "migrate.parse.docker", "yaml", "statistics", "importlib.resources", "migrate.substitutions",
             "migrate.risk", "shutil", "csv", "pkgutil", "migrate.baseline", "migrate.gitdiff", "migrate.parse.cmake",
             "migrate.parse.manifest", "migrate.engine_rules", "tomllib", "configparser", "hashlib"):
    print(name, name in sys.modules)
"""


def test_a_scan_of_cuda_files_imports_only_what_they_need(tmp_path: Path) -> None:
    """As `check` runs on a machine that ran migrate before: the validated rules and the knowledge files (API map,
    headers, risk weights) come from the cache, so no YAML or TSV is read (and the builtin engine's rules, which a
    scan never reads, are not imported)."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "kernel.cu").write_text("__global__ void k(float* p) { cudaMalloc(&p, 4); }\n")
    command = [sys.executable, "-c", SCAN_CUDA, str(tmp_path / "repo"), str(tmp_path / "cache")]
    subprocess.run(command, capture_output=True, check=True)
    (tmp_path / "repo" / "kernel.cu").write_text("__global__ void k(float* p) { cudaFree(p); }\n")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    count, *loaded = done.stdout.splitlines()
    assert int(count) >= 1
    assert loaded == [
        "packaging False", "multiprocessing False", "migrate.parse.python False", "migrate.matchers.python_code False",
        "migrate.parse.docker False", "yaml False", "statistics False", "importlib.resources False",
        "migrate.substitutions False", "migrate.risk False", "shutil False", "csv False", "pkgutil False",
        "migrate.baseline False", "migrate.gitdiff False", "migrate.parse.cmake False", "migrate.parse.manifest False",
        "migrate.engine_rules False", "tomllib False", "configparser False", "hashlib False",
    ]


WARM_SCAN = """
import sys
import migrate.cache.store
from migrate.cli import main
migrate.cache.store._SETTLED_NS = 0  # the files count as settled at once (no two-second wait in a test)
sys.argv = ["migrate", "scan", sys.argv[1], "--format", "json", "--output", sys.argv[3], "--cache-dir", sys.argv[2]]
try:
    main()
except SystemExit:
    pass
print(*sorted(name for name in sys.modules if name.startswith(("migrate.scan", "migrate.assessment"))), file=sys.stderr)
"""


def test_a_warm_scan_imports_no_module_of_the_scan(tmp_path: Path) -> None:
    """The memo hands back the kept report: discovery and the key, without scan/, the assessment or the renderers."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "kernel.cu").write_text("__global__ void k(float* p) { cudaMalloc(&p, 4); }\n")
    command = [sys.executable, "-c", WARM_SCAN, str(tmp_path / "repo"), str(tmp_path / "cache"), str(tmp_path / "out")]
    cold = subprocess.run(command, capture_output=True, text=True, check=True)
    first = (tmp_path / "out").read_bytes()
    warm = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "migrate.scan.orchestrate" in cold.stderr.split()
    assert warm.stderr.split() == [] and (tmp_path / "out").read_bytes() == first


SCAN_AND_ASSESS = """
import sys
from pathlib import Path
import tree_sitter
import migrate.ruleset
compiled, read = [], []
original, original_read = tree_sitter.Query, migrate.ruleset._load_file
tree_sitter.Query = lambda *args: compiled.append(args[1]) or original(*args)
migrate.ruleset._load_file = lambda path: read.append(path) or original_read(path)
from migrate.assessment import assess
from migrate.config import load_settings
from migrate.scan import scan
root = Path(sys.argv[1])
result = scan(root, load_settings(root, {"cache_dir": sys.argv[2]}))
assess(result)
print(sorted({f.rule for f in result.findings}))
print(len(read), len(compiled))
"""


def test_a_scan_with_its_rules_from_the_cache_compiles_one_bundle(tmp_path: Path) -> None:
    """The rules read back from the cache are not read from their files again for the assessment, and the
    cuda-query rules' queries join the one bundle of the rules that tree-sitter compiles (a file over 16K characters
    uses it; it asks for no matcher's query)."""
    (tmp_path / "repo").mkdir()
    filler = "".join(f"int f{i}(int x) {{ return x + {i}; }}\n" for i in range(800))
    kernel = tmp_path / "repo" / "kernel.cu"
    kernel.write_text("texture<float, 1, cudaReadModeElementType> tex;\n" + filler)
    command = [sys.executable, "-c", SCAN_AND_ASSESS, str(tmp_path / "repo"), str(tmp_path / "cache")]
    subprocess.run(command, capture_output=True, check=True)
    kernel.write_text("texture<float, 2, cudaReadModeElementType> tex;\n" + filler)
    rules, counts = subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()
    assert "cuda-texture-reference" in rules
    assert counts == "0 1"  # no rule file read, one query compiled


CHECK = """
import sys
from migrate.cli import main
sys.argv = ["migrate", "check", "--cache-dir", sys.argv[1], *sys.argv[2:]]
try:
    main()
except SystemExit as exc:
    print(exc.code)
print(*sorted(name for name in sys.modules if name.startswith(("migrate.commands", "migrate.report"))))
"""


def test_check_builds_no_other_command(tmp_path: Path) -> None:
    """The CLI loads the module of the command it runs, not the other commands' (nor the report formats scan's
    options name)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "kernel.cu").write_text("__global__ void k(float* p) { cudaMalloc(&p, 4); }\n")
    done = subprocess.run([sys.executable, "-c", CHECK, str(tmp_path / "cache"), "kernel.cu"], cwd=repo,
                          capture_output=True, text=True, check=True)
    code, loaded = done.stdout.splitlines()
    assert code == "0"
    assert loaded.split() == ["migrate.commands", "migrate.commands.check", "migrate.commands.check_run",
                              "migrate.commands.common", "migrate.commands.output"]


ENTRY = """
import gc, sys
during = []  # a collection that starts while migrate.cli is imported (in sys.modules, but without its main yet)
gc.callbacks.append(lambda phase, info: phase == "start" and during.append(
    "migrate.cli" in sys.modules and not hasattr(sys.modules["migrate.cli"], "main")))
if sys.argv[-1] == "plain":
    import migrate.cli
else:
    from migrate.__main__ import main
    sys.argv = ["migrate", "--version"]
    try:
        main()
    except SystemExit:
        pass
print(sum(during), gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_the_console_script_imports_the_command_line_with_the_collector_paused() -> None:
    """No cyclic collection while click and the model load (a dozen in a plain import), the collector on again after,
    and what the imports made left out of its later walks."""
    done = subprocess.run([sys.executable, "-c", ENTRY], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["migrate, version 0.1.0", "0 True True"]
    plain = subprocess.run([sys.executable, "-c", ENTRY, "plain"], capture_output=True, text=True, check=True)
    assert int(plain.stdout.split()[0]) > 0
    usage = subprocess.run([sys.executable, "-m", "migrate", "--version"], capture_output=True, text=True, check=True)
    assert usage.stdout == "migrate, version 0.1.0\n"
