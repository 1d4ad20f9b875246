"""Scan-level behaviour that no single rule owns."""

from __future__ import annotations

import gc
import multiprocessing
import time
from pathlib import Path

from migrate.config import Settings
from migrate.model import FileKind, SourceFile
from migrate.ruleset import Ruleset
from migrate.scan import pool, scan
from migrate.scan.file import Shortcuts


def write(root: Path, relpath: str, text: str) -> None:
    (root / relpath).parent.mkdir(parents=True, exist_ok=True)
    (root / relpath).write_text(text)


def test_imports_of_the_repositorys_own_package_are_not_dependencies(tmp_path: Path) -> None:
    write(tmp_path, "flash_attn/__init__.py", "from flash_attn.ops import kernel\n")
    write(tmp_path, "tests/test_it.py", "import flash_attn\n")
    assert scan(tmp_path, Settings(jobs=1)).findings == ()
    other = tmp_path / "other"
    write(other, "train.py", "import flash_attn\n")
    assert [f.rule for f in scan(other, Settings(jobs=1)).findings] == ["python-flash-attn"]


def test_a_package_rules_own_repository_reads_its_kernels_and_distribution_as_first_party(tmp_path: Path) -> None:
    kernel = "import warp as wp\n\n@wp.kernel\ndef add(a: wp.array(dtype=float)):\n    pass\n\nwp.launch(add, dim=4)\n"
    write(tmp_path, "pyproject.toml", '[project]\nname = "warp-lang"\ndependencies = ["numpy"]\n')
    write(tmp_path, "warp/__init__.py", "from warp.context import launch\n")
    write(tmp_path, "examples/add.py", kernel)
    write(tmp_path, "docs/install.md", "```sh\npip install warp-lang\n```\n")
    assert scan(tmp_path, Settings(jobs=1)).findings == ()
    other = tmp_path / "other"
    write(other, "sim.py", kernel)
    write(other, "requirements.txt", "warp-lang>=1.0\n")
    assert sorted({f.rule for f in scan(other, Settings(jobs=1)).findings}) == ["nvidia-warp-dependency", "python-nvidia-warp"]


def test_the_distribution_named_by_setup_py_is_the_repositorys_own(tmp_path: Path) -> None:
    from migrate.inputs import own_packages

    write(tmp_path, "setup.py", 'from setuptools import setup\nNAME = "numba-cuda"\nsetup(name=NAME, version="1")\n')
    write(tmp_path, "requirements.txt", "numba-cuda\nnumpy\n")
    assert own_packages(tmp_path) == {"numba-cuda"}
    assert scan(tmp_path, Settings(jobs=1)).findings == ()
    write(tmp_path / "user", "setup.py", 'from setuptools import setup\nsetup(name="solver", install_requires=["numba-cuda"])\n')
    assert [f.rule for f in scan(tmp_path / "user", Settings(jobs=1)).findings] == ["numba-cuda-dependency"]


def test_the_extensions_setup_py_builds_are_the_repositorys_own(tmp_path: Path) -> None:
    """apex builds amp_C: its own `import amp_C` is no dependency; a project that imports it builds on apex."""
    from migrate.inputs import own_packages

    write(tmp_path, "setup.py",
          "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, CppExtension\n"
          "exts = [CUDAExtension(name='amp_C', sources=['csrc/amp_C.cu']), CppExtension('apex_C.ops', ['x.cpp'])]\n"
          "setup(name='mixed', ext_modules=exts)\n")
    write(tmp_path, "clip.py", "import amp_C\n")
    assert own_packages(tmp_path) == {"mixed", "amp_C", "apex_C"}
    assert [f.rule for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "python-apex-extension"] == []
    write(tmp_path / "user", "clip.py", "import amp_C\n")
    assert [f.rule for f in scan(tmp_path / "user", Settings(jobs=1)).findings] == ["python-apex-extension"]


def test_the_distributions_named_by_pyproject_and_setup_cfg_are_the_repositorys_own(tmp_path: Path) -> None:
    """Each packaging file names its distribution; a missing, empty or broken one names none."""
    from migrate.inputs import distribution_names

    assert distribution_names(tmp_path) == set()
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "setup.cfg", "")
    assert distribution_names(tmp_path) == set()
    write(tmp_path, "pyproject.toml", '[project]\nname = "warp-lang"\n')
    write(tmp_path, "setup.cfg", "[metadata]\nname = cuda-solver\n")
    assert distribution_names(tmp_path) == {"warp-lang", "cuda-solver"}
    write(tmp_path, "pyproject.toml", "[project\nname = 1\n")
    write(tmp_path, "setup.cfg", "name = cuda-solver\n")
    assert distribution_names(tmp_path) == set()


def test_a_nested_projects_own_imports_and_install_lines_are_first_party(tmp_path: Path) -> None:
    vendored = "third_party/AutoGPTQ"
    write(tmp_path, f"{vendored}/setup.py", 'from setuptools import setup\nsetup(name="auto_gptq")\n')
    write(tmp_path, f"{vendored}/auto_gptq/__init__.py", "from auto_gptq.modeling import AutoGPTQForCausalLM\n")
    write(tmp_path, f"{vendored}/README.md", "```sh\npip install auto-gptq\n```\n")
    write(tmp_path, "quantize.py", "from auto_gptq import AutoGPTQForCausalLM\n")
    found = [(f.path, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings if f.severity.label != "info"]
    assert found == [("quantize.py", "python-gptq-awq-kernels")]


def test_a_rasteriser_the_repository_holds_is_first_party_and_one_from_a_submodule_is_not(tmp_path: Path) -> None:
    """`pip install submodules/simple-knn` builds a tree the repository holds (its setup.py is here): its kernels are
    reported at their source; the rasteriser's submodule is not checked out, so its install line and import are the
    places that say it must be built for ROCm."""
    write(tmp_path, "submodules/simple-knn/setup.py", 'from setuptools import setup\nsetup(name="simple_knn")\n')
    write(tmp_path, "README.md", "```bash\npip install submodules/simple-knn\n"
                                 "pip install ./submodules/diff-gaussian-rasterization\n```\n")
    write(tmp_path, "render.py", "from simple_knn._C import distCUDA2\nfrom diff_gaussian_rasterization import R\n")
    found = [(f.path, f.line, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings if f.severity.label != "info"]
    assert found == [("README.md", 3, "cuda-extension-path-install"), ("render.py", 2, "python-cuda-extension-import")]


def test_an_environment_files_pip_list_installs_local_trees_like_a_readme_command(tmp_path: Path) -> None:
    """A local directory in an environment.yml pip list or a requirements file is a `pip install PATH`: the tree the
    repository holds is first party, the submodules it does not hold (a rasteriser, fused-ssim) must be built."""
    write(tmp_path, "submodules/simple-knn/setup.py", 'from setuptools import setup\nsetup(name="simple_knn")\n')
    write(tmp_path, "environment.yml", "name: splat\ndependencies:\n  - pip:\n    - submodules/simple-knn\n"
                                       "    - submodules/diff-surfel-rasterization\n    - submodules/fused-ssim\n")
    write(tmp_path, "requirements.txt", "plyfile\nsubmodules/diff-gaussian-rasterization\n")
    found = [(f.path, f.line, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings if f.severity.label != "info"]
    assert found == [("environment.yml", 5, "cuda-extension-path-install"),
                     ("environment.yml", 6, "cuda-extension-path-install"),
                     ("requirements.txt", 2, "cuda-extension-path-install")]


def test_bundled_cutlass_counts_once_per_file_and_as_vendored(tmp_path: Path) -> None:
    uses = "\n".join(f"cutlass::gemm::GemmShape<{i}, 8, 8> shape{i};" for i in range(5))
    write(tmp_path, "csrc/cutlass/include/cutlass/gemm.h", uses + "\n")
    write(tmp_path, "csrc/kernel.cu", uses + "\n")
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cutlass-usage"]
    assert [(f.path, f.line, f.vendored) for f in findings] == [
        ("csrc/cutlass/include/cutlass/gemm.h", 1, True),
        ("csrc/kernel.cu", 1, False),
    ]
    assert findings[0].message.endswith("(5 places in this file.)")


def test_a_finding_with_another_status_keeps_every_other_field() -> None:
    from dataclasses import fields, replace

    from migrate.model import Finding, Occurrence, Severity

    finding = Finding("a.cu", 3, 4, "r", "inline-ptx", Severity.HIGH, 5, "m", "e", hip="h", substitutions=("s",),
                      vendored=True, symbol="y", effort=(1.0, 2.0), occurrences=(Occurrence(3, 4, 5, "e"),))
    moved = finding.with_status("guarded")
    assert moved == replace(finding, status="guarded") and moved.status == "guarded" and finding.status == "remaining"
    assert [getattr(moved, f.name) for f in fields(Finding)] == [getattr(replace(finding, status="guarded"), f.name) for f in fields(Finding)]


def test_findings_are_ordered_by_key_and_the_first_of_equal_ones_is_kept() -> None:
    from dataclasses import replace

    from migrate.model import Finding, Severity, ordered

    a = Finding("a.cu", 2, 1, "r", "other", Severity.LOW, 2, "m", "e")
    b = Finding("a.cu", 10, 1, "r", "other", Severity.LOW, 10, "m", "e")
    c = Finding("b.cu", 1, 1, "r", "other", Severity.LOW, 1, "m", "e")
    assert ordered([c, b, a]) == [a, b, c]  # by line as a number, not as text
    first, second = replace(b, status="covered"), replace(b, status="guarded")
    kept = ordered([c, first, a, second])
    assert kept == [a, b, c] and kept[1].status == "covered"
    assert ordered((a, b, c)) == [a, b, c] and ordered([]) == []


def test_findings_that_repeat_a_string_share_one_copy_of_it(tmp_path: Path) -> None:
    # 70 files: scanned by a pool of two forked workers, whose results each come with strings of their own
    shapes = "cutlass::gemm::GemmShape<8, 8, 8> a;\ncutlass::gemm::GemmShape<8, 8, 8> a;\n"
    for index in range(70):
        write(tmp_path, f"k{index}.cu", "void f(float** p) {\n  cudaMalloc(p, 4);\n  cudaMalloc(p, 8);\n}\n" + shapes)
    findings = scan(tmp_path, Settings(jobs=2)).findings
    assert len({f.path for f in findings}) == 70
    by_text: dict[str, list[str]] = {}
    for finding in findings:
        for text in (finding.message, finding.rule, finding.category, finding.evidence,
                     *(o.evidence for o in finding.occurrences)):
            by_text.setdefault(text, []).append(text)
    assert {"cudaMalloc(p, 4);", "cutlass::gemm::GemmShape<8, 8, 8> a;"} <= by_text.keys()
    assert all(len(copies) >= 70 and all(c is copies[0] for c in copies) for copies in by_text.values())


def test_findings_already_in_order_keep_only_the_first_of_equal_ones() -> None:
    from migrate.model import Finding, Severity, ordered

    a = Finding("a.cu", 2, 1, "r", "other", Severity.LOW, 2, "m", "e")
    b = Finding("a.cu", 3, 1, "r", "other", Severity.LOW, 3, "m", "e")
    assert ordered([a, b]) == [a, b]
    kept = ordered([a, a.with_status("covered"), b])
    assert kept == [a, b] and kept[0].status == "remaining"


def test_a_worker_collects_cycles_at_its_own_thresholds() -> None:
    context = multiprocessing.get_context("fork")
    with context.Pool(1, initializer=pool._init_worker, initargs=(Ruleset(()), Settings(), Shortcuts())) as workers:
        assert workers.apply(gc.isenabled)
        assert workers.apply(gc.get_threshold) == pool.WORKER_GC_THRESHOLDS
    assert gc.get_threshold() != pool.WORKER_GC_THRESHOLDS  # this process keeps its own


def test_work_units_stay_small_however_large_the_tree() -> None:
    # a unit's results reach the parent whole: a unit that grew with the tree made the parent's memory grow with it
    sizes = [40_000] * 60_000 + [5 << 20]  # 2.3 GB of sources, one 5 MB file among them
    sources = [SourceFile(Path(f"f{i}.cu"), f"f{i}.cu", FileKind.CUDA, size) for i, size in enumerate(sizes)]
    units = list(pool._batches(sources, 2))
    assert units[0] == [sources[-1]]  # the largest first, alone: it is over the cap by itself
    assert all(sum(s.size for s in unit) <= pool.BATCH_MOST + 40_000 for unit in units[1:])
    assert sorted(s.relpath for unit in units for s in unit) == sorted(s.relpath for s in sources)
    small = [SourceFile(Path(f"g{i}.py"), f"g{i}.py", FileKind.PYTHON, 1_000) for i in range(1_000)]
    assert len(list(pool._batches(small, 2))) == 22  # a small tree still makes a few units per worker


def test_the_last_units_are_cut_finer_so_that_the_workers_finish_together() -> None:
    sizes = [1 << 20] * 8 + [10_000] * 800  # 8 MB of large files, then 8 MB of small ones
    sources = [SourceFile(Path(f"f{i}.cu"), f"f{i}.cu", FileKind.CUDA, size) for i, size in enumerate(sizes)]
    units = [sum(s.size for s in unit) for unit in pool._batches(sources, 2)]
    budget = sum(sizes) // 32  # two workers, 16 units each
    assert units[:8] == [1 << 20] * 8  # a large file alone
    tail = units[max(i for i, size in enumerate(units) if size >= budget) + 1:]  # after the last full unit
    assert len(tail) >= 2 * pool.LAST_SHARE and sum(tail) <= 3 * budget  # the last two budgets' files ...
    assert all(size <= budget // pool.LAST_SHARE + 10_000 for size in tail[1:])  # ... in quarters (after the one cut
    # where they begin)


def test_a_file_named_twice_is_scanned_into_the_findings_once(tmp_path: Path) -> None:
    # each file's findings are kept by the index of discovery's record: a file named twice has two records
    write(tmp_path, "b.cu", "void f() { cudaMalloc(0, 0); }\n")
    write(tmp_path, "a.cu", "void g() { cudaFree(0); cudaMalloc(0, 0); }\n")
    once = scan(tmp_path, Settings(jobs=1), files=[tmp_path / "b.cu", tmp_path / "a.cu"])
    twice = scan(tmp_path, Settings(jobs=1), files=[tmp_path / "b.cu", tmp_path / "a.cu", tmp_path / "b.cu"])
    assert [f.path for f in once.findings] == ["a.cu", "a.cu", "b.cu"]
    assert twice.findings == once.findings


def test_a_pool_gives_each_result_with_its_index(tmp_path: Path) -> None:
    # the parent keeps each file's place by that index, not by a dict of paths; the SourceFiles are made as sent
    made: list[int] = []

    class Lazy(list[SourceFile]):
        def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
            made.append(index)
            return super().__getitem__(index)

    for i in range(pool.PARALLEL_FROM):
        write(tmp_path, f"f{i:02d}.cu", "void f() { cudaMalloc(0, 0); }\n" * (i + 1))
    sources = Lazy(SourceFile(tmp_path / f"f{i:02d}.cu", f"f{i:02d}.cu", FileKind.CUDA, 32 * (i + 1))
                   for i in range(pool.PARALLEL_FROM))
    found = list(pool.computed(sources, Ruleset(()), Settings(jobs=2), None, time.monotonic() + 600, Shortcuts()))
    assert sorted(made) == list(range(pool.PARALLEL_FROM))  # each asked for by index once: as its unit is sent
    assert sorted(index for index, _ in found) == list(range(pool.PARALLEL_FROM))
    assert all(result.relpath == f"f{index:02d}.cu" for index, result in found)


def test_a_dockerfile_named_with_an_underscore_or_dash_is_read_as_one(tmp_path: Path) -> None:
    """Dockerfile_dev.gpu and Dockerfile-base are Dockerfiles; a Dockerfile-named YAML file is not."""
    base = "FROM nvidia/cuda:12.2.0-devel-ubuntu22.04\n"
    write(tmp_path, "docker/Dockerfile_dev.gpu", base)
    write(tmp_path, "docker/Dockerfile-base", base + "RUN conda install -y cudatoolkit=11.8\n")
    write(tmp_path, "docker/Dockerfile-lint.yml", "ignored:\n  - DL3008\n")
    found = sorted((f.path, f.line, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings)
    assert found == [("docker/Dockerfile-base", 1, "nvidia-cuda-base-image"), ("docker/Dockerfile-base", 2, "conda-cuda-package"),
                     ("docker/Dockerfile_dev.gpu", 1, "nvidia-cuda-base-image")]


def test_the_parents_own_work_runs_once_while_the_workers_scan(tmp_path: Path) -> None:
    for i in range(pool.PARALLEL_FROM):
        write(tmp_path, f"f{i:02d}.cu", "void f() { cudaMalloc(0, 0); }\n")
    sources = [SourceFile(tmp_path / f"f{i:02d}.cu", f"f{i:02d}.cu", FileKind.CUDA, 32) for i in range(pool.PARALLEL_FROM)]
    workers: list[int] = []
    parallel = pool.worker_count(Settings(jobs=2)) == 2  # a machine of one core runs no pool
    for jobs, expected in ((2, [2] if parallel else []), (1, [])):  # one job: no pool, nothing to do beside it
        workers.clear()
        found = pool.computed(sources, Ruleset(()), Settings(jobs=jobs), None, time.monotonic() + 600, Shortcuts(),
                              meanwhile=lambda: workers.append(len(multiprocessing.active_children())))
        assert len(list(found)) == pool.PARALLEL_FROM
        assert workers == expected
