"""Shared test helpers: fake git repos from fixtures, golden files, external tools."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
REPOS = FIXTURES / "repos"
EXPECTED = FIXTURES / "expected"
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
}


KERNEL = "void f(float* p) {\n  cudnnHandle_t h;\n  cudaMalloc(&p, 4);\n}\n"
USER_RULE = """\
rules:
  - id: team-gpu-wrappers
    title: Our wrappers instead of the CUDA runtime
    category: other
    languages: [cuda]
    severity: {severity}
    message: Use the team::gpu wrappers.
    match: {{matcher: cuda-api, libraries: [runtime], with_hip: true}}
"""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite fixtures/expected/* from current output")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def git(repo: Path, *args: str) -> str:
    """Run git in REPO with a fixed identity and no user configuration."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    return done.stdout


def init_repo(path: Path) -> Path:
    """git init PATH and commit everything in it."""
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial", "--allow-empty")
    return path


@pytest.fixture
def make_repo(tmp_path: Path):
    """make_repo(name) -> a committed git repo copied from fixtures/repos/NAME into a temp dir."""

    def make(name: str, *, git_init: bool = True) -> Path:
        target = tmp_path / name
        shutil.copytree(REPOS / name, target, symlinks=True)
        return init_repo(target) if git_init else target

    return make


def require_tool(name: str) -> str:
    """The tool's path; skip when absent, or fail when MIGRATE_REQUIRE_TOOLS is set (as in CI)."""
    found = shutil.which(name)
    if found:
        return found
    _missing(f"{name} is not installed")


def _missing(message: str) -> NoReturn:
    if os.environ.get("MIGRATE_REQUIRE_TOOLS"):
        pytest.fail(f"{message} (MIGRATE_REQUIRE_TOOLS is set)")
    pytest.skip(message)


REAL_HEADERS = ROOT / ".venv" / "real-headers"  # scripts/real_headers.py unpacks them there (setup.sh --test)


def torch_extension_flags(name: str) -> list[str]:
    """nvcc's flags for a PyTorch CUDA extension unit as torch's BuildExtension passes them, against the real
    PyTorch headers: the ones scripts/real_headers.py unpacked, else an importable torch's (found, not imported)."""
    import importlib.util
    import sysconfig

    include = REAL_HEADERS / "torch" / "include"
    if not include.is_dir():
        spec = importlib.util.find_spec("torch")
        include = Path(spec.origin).parent / "include" if spec is not None and spec.origin else include
    if not (include / "torch" / "extension.h").is_file():
        _missing("the PyTorch headers are not installed (bash scripts/setup.sh --test unpacks them)")
    libraries = REAL_HEADERS / "cuda-libs" / "include"
    return [
        f"-I{include}", f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}", f"-I{sysconfig.get_paths()['include']}",
        *([f"-I{libraries}"] if libraries.is_dir() else []),
        # a CUDA wheel ships c10/cuda/impl/cuda_cmake_macros.h, which a CPU wheel lacks; torch's switch for its absence
        "-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE",
        "-DTORCH_API_INCLUDE_EXTENSION_H", f"-DTORCH_EXTENSION_NAME={name}",
        "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr", "-std=c++20", "-Xcompiler", "-fPIC",
    ]


def scan_files(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    """Write FILES (relative path: text) under ROOT and scan it in one process: the ScanResult."""
    from migrate.config import Settings
    from migrate.scan import scan

    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    return scan(root, Settings(jobs=1, max_file_size=10**6))


def tree_findings(root: Path, files: dict[str, str]) -> list[tuple]:
    """The findings of FILES scanned under ROOT, exactly: (path, line, rule, severity, occurrence lines), sorted."""
    return sorted((f.path, f.line, f.rule, f.severity.label, tuple(o.line for o in f.occurrences))
                  for f in scan_files(root, files).findings)


def file_findings(root: Path, name: str, source: str) -> list[tuple[str, int, str, int]]:
    """(rule, line, severity, number of occurrences) of every finding of one file NAME holding SOURCE (dedented),
    scanned under ROOT, which skips nothing."""
    result = scan_files(root, {name: textwrap.dedent(source).lstrip("\n")})
    assert not result.skipped
    return [(f.rule, f.line, f.severity.label, len(f.occurrences)) for f in result.findings]


def check_golden(actual: str, golden: Path, update: bool) -> None:
    """Compare ACTUAL with the golden file; --update-golden rewrites it instead."""
    if update or not golden.exists():
        if not update:
            pytest.fail(f"golden file {golden.relative_to(ROOT)} is missing; run pytest --update-golden and read the diff")
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
        return
    assert actual == golden.read_text(encoding="utf-8"), f"output differs from {golden.relative_to(ROOT)}"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The relpaths scan_file actually scanned (in this process)."""
    seen: list[str] = []
    import migrate.scan.pool

    real = migrate.scan.pool.scan_file

    def counting(source, *rest):  # type: ignore[no-untyped-def]
        seen.append(source.relpath)
        return real(source, *rest)

    monkeypatch.setattr(migrate.scan.pool, "scan_file", counting)
    return seen


def parse_file(tmp_path: Path, relpath: str, kind, text: str):
    """TEXT written at RELPATH under TMP_PATH and parsed as a file of KIND (a Document, or Skipped)."""
    from migrate.model import SourceFile
    from migrate.parse import parse

    path = tmp_path / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return parse(SourceFile(path, relpath, kind, len(text)))


@cache
def sarif_schema() -> dict[str, object]:
    """The OASIS SARIF 2.1.0 schema the SARIF outputs are validated against."""
    return json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1600",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium driven by selenium (the HTML report and the fleet report)."""
    chromium, chromedriver = require_tool("chromium"), require_tool("chromedriver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="migrate-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, page: str, path: Path):  # type: ignore[no-untyped-def]
    """PAGE written to PATH and opened in DRIVER."""
    path.write_text(page, encoding="utf-8")
    driver.get(path.as_uri())
    return driver
