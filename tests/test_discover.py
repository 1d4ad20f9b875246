"""Discovery: git's view in a work tree, a filtered walk elsewhere; classification by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.discover import classify, discover
from migrate.model import FileKind, Skipped, SourceFile
from migrate.scan import scan

from conftest import git, init_repo


def found(root: Path, **kwargs) -> dict[str, SourceFile]:
    items = discover(root, max_file_size=10**6, **kwargs)
    return {i.relpath: i for i in items if isinstance(i, SourceFile)}


def touch(root: Path, *paths: str, text: str = "x = 1\n") -> None:
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("a/train.py", FileKind.PYTHON), ("k.cu", FileKind.CUDA), ("inc/k.cuh", FileKind.CUDA),
        ("x.cpp", FileKind.CPP), ("x.h", FileKind.CPP), ("x.c", FileKind.C), ("setup.py", FileKind.SETUP_PY),
        ("requirements.txt", FileKind.REQUIREMENTS), ("requirements-dev.txt", FileKind.REQUIREMENTS),
        ("requirements/base.txt", FileKind.REQUIREMENTS), ("requirements.in", FileKind.REQUIREMENTS),
        ("pyproject.toml", FileKind.PYPROJECT), ("Dockerfile", FileKind.DOCKERFILE),
        ("docker/Dockerfile.cuda", FileKind.DOCKERFILE), ("docker-compose.yml", FileKind.COMPOSE),
        ("docker/Dockerfile-gpu", FileKind.DOCKERFILE), ("Dockerfile_dev.cpu", FileKind.DOCKERFILE),
        ("tools/dockerfile_utils.py", FileKind.PYTHON), ("docs/Dockerfile-notes.md", FileKind.MARKDOWN),
        ("environment.yml", FileKind.CONDA), ("CMakeLists.txt", FileKind.CMAKE), ("cmake/cuda.cmake", FileKind.CMAKE),
        ("Makefile", FileKind.MAKEFILE), ("run.sh", FileKind.SHELL), ("README.md", FileKind.MARKDOWN),
        (".github/workflows/ci.yml", FileKind.CI_WORKFLOW), ("k8s/job.yaml", FileKind.YAML),
        ("notes.txt", None), ("image.png", None),
        # configure's Makefile templates are read as Makefiles (the parser skips one automake generated); Autoconf's
        # input and macro files are their own kind; aclocal's output and the generated configure are not read
        ("Makefile.in", FileKind.MAKEFILE), ("configure.ac", FileKind.AUTOCONF),
        ("src/configure.in", FileKind.AUTOCONF),
        ("config/m4/cuda.m4", FileKind.AUTOCONF), ("aclocal.m4", None), ("configure", None),
        # CMake configure_file templates, read as the file they become; other templates are not
        ("gloo/config.h.in", FileKind.CPP), ("src/util/version.cc.in", FileKind.CPP), ("k/ops.cu.in", FileKind.CUDA),
        ("cmake/GlooConfig.cmake.in", FileKind.CMAKE), ("MANIFEST.in", None), ("setup.py.in", None),
        ("cmake/CMakeLists.txt.in", None),
        # the same templates spelled with a .cmake suffix (configure_file(config.hpp.cmake config.hpp)); a CMake module
        # or package config keeps its kind
        ("inc/fft_config.hpp.cmake", FileKind.CPP), ("src/config.h.cmake", FileKind.CPP),
        ("k/launch.cu.cmake", FileKind.CUDA), ("cmake/FindNCCL.cmake", FileKind.CMAKE),
        ("cmake/ProjConfig.cmake", FileKind.CMAKE), ("cmake/setup.cmake.cmake", FileKind.CMAKE),
        # Dockerfiles named with a separator; a data, script or docs suffix keeps its own kind
        ("tools/docker/Dockerfile_dev.gpu", FileKind.DOCKERFILE), ("docker/Dockerfile-base", FileKind.DOCKERFILE),
        ("docker/dockerfile-python", FileKind.DOCKERFILE), ("ci/runtime_Dockerfile", FileKind.DOCKERFILE),
        ("Dockerfile-lint.yml", FileKind.YAML), ("dockerfile_gen.py", FileKind.PYTHON),
        ("dockerfile-build.sh", FileKind.SHELL), ("Dockerfile_notes.md", FileKind.MARKDOWN), ("dockerfiles", None),
        # Triton model configs and their templates; other protobuf text (a TensorFlow graph, a MediaPipe graph) is not
        ("models/encoder/config.pbtxt", FileKind.INFER_CONFIG), ("repo/dec/config.pbtxt.template", FileKind.INFER_CONFIG),
        ("repo/dec/config_template2.pbtxt", FileKind.INFER_CONFIG), ("model/graph.pbtxt", None),
        ("graphs/hand_tracking_desktop.pbtxt", None),
        # requirements files named for their purpose first
        ("install-requirements.txt", FileKind.REQUIREMENTS), ("ci/dev_requirements.txt", FileKind.REQUIREMENTS),
        ("test-constraints.in", FileKind.REQUIREMENTS), ("docs/requirements_notes.md", FileKind.MARKDOWN),
        ("scripts/check-requirements.py", FileKind.PYTHON),
        # MATLAB scripts and the mex option files a CUDA MEX build sets up; other XML is not read
        ("MATLAB/Compile.m", FileKind.MATLAB), ("MATLAB/mex_CUDA_glnxa64.xml", FileKind.MATLAB),
        ("mex/nvcc_msvcpp2019.xml", FileKind.MATLAB), ("docs/layout.xml", None),
        # Maven and Gradle builds (their dependencies), Autoconf inputs (their checks), .NET project files
        ("java/pom.xml", FileKind.JVM_BUILD), ("app/build.gradle.kts", FileKind.JVM_BUILD),
        ("configure.ac", FileKind.AUTOCONF), ("m4/ax_cuda.m4", FileKind.AUTOCONF), ("src/App.csproj", FileKind.MSBUILD),
        # Go sources (what they bind through cgo, PTX in their strings); go.mod and go.sum are not read
        ("cuda/cu/module.go", FileKind.GO), ("go.mod", None), ("go.sum", None),
        # Fortran, free and fixed form, and CUDA Fortran (.cuf); the suffix's case does not matter
        ("src/solver.F90", FileKind.FORTRAN), ("legacy/smooth.f", FileKind.FORTRAN), ("gpu/kernels.cuf", FileKind.FORTRAN),
        ("src/model.mod", None),
        # Julia sources and package manifests (CUDA.jl users)
        ("src/Solver.jl", FileKind.JULIA), ("Project.toml", FileKind.JULIA_PROJECT),
        ("docs/JuliaProject.toml", FileKind.JULIA_PROJECT), ("Manifest.toml", None),
        # Cython sources (the CUDA their extern blocks declare and their code calls)
        ("det/nms/gpu_nms.pyx", FileKind.CYTHON), ("lib/streams.pxd", FileKind.CYTHON), ("lib/defs.pxi", FileKind.CYTHON),
        # SASS assembler sources and disassemblies (a CSS Sass stylesheet shares .sass: the rules tell them apart)
        ("sass_cubin/latency.sass", FileKind.SASS), ("sgemm/asm/sgemm.sm_70.cuasm", FileKind.SASS),
        # conda environments named for their variant, in a folder of environments or under conda/
        ("conda/environments/all_cuda-129_arch-x86_64.yaml", FileKind.CONDA), ("envs/gpu.yml", FileKind.CONDA),
        ("ci/environments/py311.yml", FileKind.CONDA), ("conda/recipes/lib/recipe.yaml", FileKind.CONDA),
        ("deploy/environment-notes/prod.yaml", FileKind.YAML), ("configs/envs.yaml", FileKind.CONDA),
        ("dependencies.yaml", FileKind.CONDA),
        # the MolSSI cookiecutter's test environments (devtools/conda-envs/), and a YAML folder that is not conda's
        ("devtools/conda-envs/build-ubuntu.yml", FileKind.CONDA), ("conda_envs/test.yaml", FileKind.CONDA),
        ("devtools/configs/build.yml", FileKind.YAML), ("anaconda-notes/setup.yaml", FileKind.YAML),
        # dev container definitions (the images they are built on); other JSON is not read
        (".devcontainer/devcontainer.json", FileKind.DEVCONTAINER), (".devcontainer.json", FileKind.DEVCONTAINER),
        (".devcontainer/gpu/devcontainer.json", FileKind.DEVCONTAINER), (".vscode/settings.json", None),
    ],
)
def test_classify(path: str, kind: FileKind | None) -> None:
    assert classify(path) == kind


def test_git_mode_lists_tracked_and_untracked_but_not_ignored(tmp_path: Path) -> None:
    touch(tmp_path, "tracked.py", ".gitignore")
    (tmp_path / ".gitignore").write_text("ignored.py\ngen/\n")
    init_repo(tmp_path)
    touch(tmp_path, "untracked.py", "ignored.py", "gen/out.py")
    assert sorted(found(tmp_path)) == ["tracked.py", "untracked.py"]


def test_an_ignored_directory_and_a_broken_work_tree_are_walked(tmp_path: Path) -> None:
    """Git is asked whether the root is ignored only below the top of a work tree (the top never is); a `.git` that
    git cannot read leaves the tree to the walk."""
    touch(tmp_path, "tracked.py", ".gitignore")
    (tmp_path / ".gitignore").write_text("gen/\n")
    init_repo(tmp_path)
    touch(tmp_path, "gen/out.py", "gen/sub/x.py", "broken/a.py", "broken/build/b.py")
    (tmp_path / "broken" / ".git").write_text(f"gitdir: {tmp_path / 'nowhere'}\n")
    assert sorted(found(tmp_path)) == ["broken/a.py", "broken/build/b.py", "tracked.py"]  # git's view
    assert sorted(found(tmp_path / "gen")) == ["out.py", "sub/x.py"]
    assert sorted(found(tmp_path / "broken")) == ["a.py"]


def test_walk_mode_skips_environments_and_build_output(tmp_path: Path) -> None:
    touch(tmp_path, "src/a.py", ".venv/lib/b.py", "node_modules/x/c.py", "build/d.py", "myenv/e.py", "pkg.egg-info/f.py")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    assert sorted(found(tmp_path)) == ["src/a.py"]


def test_vendored_trees_are_marked(tmp_path: Path) -> None:
    touch(tmp_path, "src/a.py", "third_party/lib/b.py", "3rdparty/c.py", "external/d.py")
    touch(tmp_path, "csrc/cutlass/include/cutlass/gemm.h", "include/cutlass/own.h", "csrc/flash/cutlass_use.cu")
    touch(tmp_path, "dependencies/optix/optix_device.h", "src/dependencies.py")
    files = found(tmp_path)
    assert {p for p, f in files.items() if f.vendored} == {
        "third_party/lib/b.py", "3rdparty/c.py", "external/d.py", "csrc/cutlass/include/cutlass/gemm.h",
        "dependencies/optix/optix_device.h",
    }


def test_submodules_are_scanned_and_marked_vendored(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    touch(sub, "kernel.py")
    init_repo(sub)
    main = tmp_path / "main"
    touch(main, "app.py")
    init_repo(main)
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "deps/sub")
    git(main, "commit", "-qm", "add submodule")
    files = found(main)
    assert files["deps/sub/kernel.py"].vendored
    assert not files["app.py"].vendored


def test_exclude_and_explicit_files(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "tests/b.py", "notes.txt")
    assert sorted(found(tmp_path, exclude=["tests/*"])) == ["a.py"]
    explicit = found(tmp_path, files=[tmp_path / "tests/b.py"], exclude=["tests/*"])
    assert sorted(explicit) == ["tests/b.py"]


def test_parallel_scan_matches_serial(tmp_path: Path) -> None:
    for index in range(120):
        touch(tmp_path, f"src/m{index}.cu", text=f"void f{index}(float** p) {{ cudaMalloc(p, {index}); }}\n")
    serial = scan(tmp_path, Settings(jobs=1))
    parallel = scan(tmp_path, Settings(jobs=2))
    assert serial == parallel
    assert len(serial.findings) == 120


def test_records_give_back_each_file_as_discovery_found_it(tmp_path: Path) -> None:
    # a large tree's records are kept in columns for the whole scan: each Found made again must be the one found
    from migrate.discover import Records, find

    (tmp_path / "csrc" / "third_party").mkdir(parents=True)
    (tmp_path / "csrc" / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "csrc" / "third_party" / "v.h").write_text("int v;\n")
    (tmp_path / "setup.py").write_text("import torch\n")
    found = [f for f in find(tmp_path, max_file_size=1 << 20) if not isinstance(f, Skipped)]
    named = [f for f in find(tmp_path, files=[tmp_path / "setup.py"], max_file_size=1 << 20)]
    records = Records([*found, *named])
    assert len(records) == 4 and list(records) == [*found, *named] and records == tuple([*found, *named])
    assert records[-1] == named[0] and records[-1].explicit and records[1:3] == found[1:3]
    assert [records.relpath(i) for i in range(len(records))] == [f.relpath for f in [*found, *named]]
    assert {f.relpath for f in records if f.vendored} == {"csrc/third_party/v.h"}
    odd = found[0]._replace(path="/elsewhere/k.cu")  # a path not under the root as the others are: kept as it is
    assert list(Records([found[1], odd])) == [found[1], odd]
