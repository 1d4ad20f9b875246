"""Manifest, build and container files: parsers, malformed inputs, the demo repo, explain/rules and targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from yaml.nodes import MappingNode, Node, ScalarNode

from migrate.cli import cli
from migrate.config import Settings
from migrate.model import FileKind, Skipped
from migrate.parse import yamlfiles
from migrate.parse.manifest import Positions
from migrate.parse.shell import shell_items
from migrate.scan import scan

from conftest import parse_file

_parse = parse_file


def _items(doc, kind: str) -> list[tuple]:
    return [(i.name, i.line, i.column) for i in doc.manifest if i.kind == kind]


# --- dev containers -------------------------------------------------------------------------------


def test_devcontainer_images_are_its_image_and_image_build_args(tmp_path: Path) -> None:
    """JSONC: the image and an image-valued build argument are items at their values; an image in a comment, a
    `//` inside a string and a command that mentions an image name nothing."""
    text = (
        "{\n"
        '  // "image": "nvcr.io/nvidia/pytorch:22.12-py3",\n'
        '  "image": "nvcr.io/nvidia/pytorch:24.03-py3",\n'
        '  /* "baseImage": "nvidia/cuda:11.8.0-base" */\n'
        '  "build": {"args": {"BASE_IMAGE": "nvidia/cuda:12.2.0-devel", "URL": "http://x//y"}},\n'
        '  "postCreateCommand": "echo image: nvidia/cuda"\n'
        "}\n"
    )
    doc = _parse(tmp_path, ".devcontainer/devcontainer.json", FileKind.DEVCONTAINER, text)
    assert _items(doc, "image") == [("nvcr.io/nvidia/pytorch:24.03-py3", 3, 13), ("nvidia/cuda:12.2.0-devel", 5, 37)]


# --- pip requirements ----------------------------------------------------------------------------


def test_requirements_lines(tmp_path: Path) -> None:
    text = (
        "--extra-index-url https://download.pytorch.org/whl/cu121\n"
        "torch==2.3.1+cu121  # pinned\n"
        "# flash-attn==2.5.8\n"
        "Flash_Attn>=2.5 ; sys_platform == 'linux'\n"
        "nvidia-cublas-cu12==12.1.3.1 \\\n    --hash=sha256:abc\n"
        "https://x.org/flash_attn-2.5.8+cu122torch2.3-cp310-cp310-linux_x86_64.whl\n"
    )
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, text)
    assert _items(doc, "index") == [("https://download.pytorch.org/whl/cu121", 1, 19)]
    packages = [(i.name, i.line, i.local) for i in doc.manifest if i.kind == "package"]
    assert packages == [
        ("torch", 2, "cu121"), ("flash-attn", 4, ""), ("nvidia-cublas-cu12", 5, ""), ("flash-attn", 7, "cu122torch2.3")
    ]


def test_environment_file_build_strings_and_local_trees(tmp_path: Path) -> None:
    """An exact conda pin's build string is the package's local label; a local directory in the pip list is the
    `pip install PATH` it amounts to, placed on its line."""
    text = ("dependencies:\n  - pytorch=2.0.1=py3.9_cuda11.8_cudnn8.7.0_0\n  - numpy=1.26.2\n  - pytorch-mutex=1.0=cuda\n"
            "  - pip:\n    - plyfile==1.0\n    - submodules/simple-knn\n")
    doc = _parse(tmp_path, "environment.yml", FileKind.CONDA, text)
    packages = [(i.name, i.line, i.local) for i in doc.manifest if i.kind == "package"]
    assert packages == [("pytorch", 2, "py3.9_cuda11.8_cudnn8.7.0_0"), ("numpy", 3, ""), ("pytorch-mutex", 4, "cuda"),
                        ("plyfile", 6, "")]
    commands = [(i.name, i.line, i.args, i.positions) for i in doc.manifest if i.kind == "command"]
    assert commands == [("pip", 7, ("install", "submodules/simple-knn"), ((7, 7), (7, 7)))]


def test_scikit_build_cuda_settings_in_either_toml_spelling(tmp_path: Path) -> None:
    """cmake.define keys for CUDA (dotted or as a table) and -D CUDA switches in cmake.args; other defines are not."""
    text = (
        '[tool.scikit-build]\ncmake.define.CMAKE_CUDA_ARCHITECTURES = "native"\ncmake.define.CMAKE_BUILD_TYPE = "Release"\n'
        'cmake.args = ["-GNinja", "-DGPU_USE_CUDA=ON"]\n'
    )
    doc = _parse(tmp_path, "pyproject.toml", FileKind.PYPROJECT, text)
    facts = [(i.name, i.line, i.value) for i in doc.manifest if i.kind == "fact"]
    assert facts == [("cmake-cuda-define", 2, "CMAKE_CUDA_ARCHITECTURES=native"),
                     ("cmake-cuda-define", 4, "GPU_USE_CUDA=ON")]
    table = '[tool.scikit-build.cmake.define]\nBUILD_DOCS = "OFF"\nCMAKE_CUDA_ARCHITECTURES = "80;90"\n'
    doc = _parse(tmp_path, "pyproject.toml", FileKind.PYPROJECT, table)
    assert [(i.name, i.line) for i in doc.manifest if i.kind == "fact"] == [("cmake-cuda-define", 3)]


def test_requirements_wheel_urls_with_markers_and_encoded_plus(tmp_path: Path) -> None:
    text = (
        "https://h.org/dl/flash_attn-2.6.0+cu124torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl; "
        "platform_system == 'Linux'\n"
        "https://h.org/dl/llama_bin-0.9.0+cu121-py3-none-linux_x86_64.whl ; python_version == '3.11'\n"
        "https://h.org/whl/cu118/torch-2.0.1%2Bcu118-cp310-cp310-linux_x86_64.whl; sys_platform == 'linux'\n"
        "exl @ https://h.org/dl/exl-0.1.0+cu122.torch2.2-cp310-cp310-linux_x86_64.whl ; python_version == '3.10'\n"
        "https://h.org/dl/plain_tool-1.0-py3-none-any.whl; sys_platform == 'linux'\n"
    )
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, text)
    packages = [(i.name, i.line, i.local) for i in doc.manifest if i.kind == "package"]
    assert packages == [
        ("flash-attn", 1, "cu124torch2.4cxx11abifalse"), ("llama-bin", 2, "cu121"), ("torch", 3, "cu118"),
        ("exl", 4, "cu122.torch2.2"), ("plain-tool", 5, ""),
    ]


def test_requirements_include_is_followed_when_discovery_would_not_read_it(tmp_path: Path) -> None:
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "gpu.txt").write_text("xformers==0.0.26\n-r ../requirements.txt\n")
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, "numpy\n-r deps/gpu.txt\n")
    packages = [(i.name, i.line, i.value) for i in doc.manifest if i.kind == "package"]
    assert packages == [("numpy", 1, "numpy"), ("xformers", 2, "xformers==0.0.26 (from deps/gpu.txt)")]


def test_requirements_line_pip_rejects_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, "torch\nthis is not a requirement\n")
    assert not isinstance(doc, Skipped)
    assert [item.name for item in doc.manifest] == ["torch"]
    (problem,) = doc.problems
    assert problem.startswith("line 2 skipped: invalid requirement 'this is not a requirement'")


# --- shell, Dockerfile, Makefile, docs -----------------------------------------------------------


def test_shell_ignores_comments_strings_and_heredocs() -> None:
    text = (
        "# nvidia-smi in a comment\n"
        'echo "run nvidia-smi"\n'
        "cat <<EOF > x.py\nnvidia-smi\nEOF\n"
        "N=$(nvidia-smi -L | wc -l) && CUDA_VISIBLE_DEVICES=0 python train.py\n"
    )
    found = shell_items(text, Positions(text).at)
    assert [(i.kind, i.name, i.line, i.column) for i in found if i.name in ("nvidia-smi", "CUDA_VISIBLE_DEVICES")] == [
        ("command", "nvidia-smi", 6, 5), ("env", "CUDA_VISIBLE_DEVICES", 6, 31)
    ]


def test_shell_case_patterns_are_choices_not_commands() -> None:
    text = "case $CC in\n  nvcc)\n    nvcc -c k.cu ;;\n  *) v=$(nvcc --version) ;;\nesac\n(cd gpu && make)\n"
    found = shell_items(text, Positions(text).at)
    assert [(i.name, i.line) for i in found if i.kind == "command"] == [
        ("case", 1), ("nvcc", 3), ("nvcc", 4), ("esac", 5), ("cd", 6), ("make", 6)]


def test_shell_runs_a_tool_through_the_variable_that_holds_its_path() -> None:
    text = (
        "TRT=/usr/src/tensorrt/bin/trtexec\n$TRT --onnx=m.onnx\n${TRT} --loadEngine=m.plan\n"
        "OUT=${OUT:-exp}\n$OUT/run.sh\nTRT=\"$(which trtexec) --verbose\"\n$TRT --onnx=m.onnx\n"
    )
    found = shell_items(text, Positions(text).at)
    # a variable later set to something other than a path (a command line) is no longer the tool; the quoted
    # substitution that sets it runs `which`
    assert [(i.name, i.line, i.value) for i in found if i.kind == "command"] == [
        ("trtexec", 2, "--onnx=m.onnx"), ("trtexec", 3, "--loadEngine=m.plan"), ("run.sh", 5, ""),
        ("which", 6, "trtexec"), ("$TRT", 7, "--onnx=m.onnx"),
    ]


def test_shell_runs_command_substitutions_inside_double_quotes() -> None:
    """`V="$(nvcc --version)"` runs nvcc as `V=$(nvcc --version)` does; single quotes, `$((...))` arithmetic and
    plain text in double quotes run nothing."""
    text = (
        'V="$(nvcc --version | head -1)"\n'
        "echo '$(nvidia-smi -L)'\n"
        'N="$((1 + 2))" && echo "nvidia-smi is prose here"\n'
        'BIN="$HOME/$(basename "$0")"\n'
    )
    found = shell_items(text, Positions(text).at)
    assert [(i.name, i.line, i.column, i.value) for i in found if i.kind == "command"] == [
        ("nvcc", 1, 6, "--version"), ("head", 1, 23, "-1"), ("echo", 2, 1, "$(nvidia-smi -L)"),
        ("echo", 3, 19, "nvidia-smi is prose here"), ("basename", 4, 14, "$0"),
    ]


def test_shell_quoted_substitution_left_open_runs_nothing() -> None:
    """A double quote or a `$(` left open at the end of the text (a cut snippet) gives no substitution."""
    for text in ('X="$(nvcc --version', 'X="$(nvcc \\', 'a "$(', 'V="$(echo "$(which nvcc")'):
        found = shell_items(text, Positions(text).at)
        assert [i.name for i in found if i.kind == "command" and i.name == "nvcc"] == []


def test_pip_install_arguments() -> None:
    text = "python -m pip install -U torch==2.3.1 --index-url=https://download.pytorch.org/whl/cu121 -r req.txt ./pkg\n"
    found = shell_items(text, Positions(text).at)
    assert [(i.kind, i.name) for i in found if i.kind in ("package", "index")] == [
        ("package", "torch"), ("index", "https://download.pytorch.org/whl/cu121")
    ]



@pytest.mark.parametrize("command, installs", [
    ("pip${PYTHON_VERSION} install --no-cache-dir flash-attn==2.7.4.post1", True),
    ("python${PY} -m pip install flash-attn", True),
    ("pip3.$MINOR install flash-attn", True),
    ("python3.11 -m pip install flash-attn", True),
    ("pipx install flash-attn", False),  # another tool
    ("pip${PYTHON_VERSION} download flash-attn", False),  # not an install
])
def test_pip_spelled_with_a_version_variable_is_pip(command: str, installs: bool) -> None:
    found = shell_items(command + "\n", Positions(command + "\n").at)
    assert [i.name for i in found if i.kind == "package"] == (["flash-attn"] if installs else [])


def test_a_wheel_url_kept_in_a_variable_is_a_package_where_it_is_spelled() -> None:
    text = ('WHEEL="https://host/wheels/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"\n'
            'OTHER="https://host/wheels/flash_attn-2.7.4+${CUDA}-cp312-cp312-linux_x86_64.whl"\n'
            'pip install "$WHEEL"\n')
    found = shell_items(text, Positions(text).at)
    assert [(i.name, i.line, i.local) for i in found if i.kind == "package"] == [
        ("flash-attn", 1, "cu12torch2.6cxx11abitrue")
    ]


def test_pip_pins_with_a_variable_keep_their_local_label() -> None:
    """A version a script fills in keeps its name and +local label as written; a variable name or range is skipped."""
    text = ('pip install "torch==${V}+cu${CUDA//./}" torchvision==0.16.2+cu$CUDA numpy==$NP '
            '"${PKG}==1.0" "scipy>=$MIN"\n')
    found = shell_items(text, Positions(text).at)
    assert [(i.name, i.local) for i in found if i.kind == "package"] == [
        ("torch", "cu${CUDA//./}"), ("torchvision", "cu$CUDA"), ("numpy", "")
    ]

def test_a_package_named_for_a_cuda_build_by_a_variable_is_read_as_that_build() -> None:
    """spconv-cu${CUDA}, cupy-cuda${CUDA_MAJOR}x: the rules' `-cu*` / `-cuda*` globs read them; other templated names
    stay skipped."""
    text = ("pip install spconv-cu${CUDA_VERSION_NO_DOT} cupy-cuda${CUDA_VERSION/./}x cumm-cu$CU ${PKG}-cu118 "
            "tool-cute$X numpy\n")
    found = shell_items(text, Positions(text).at)
    assert [i.name for i in found if i.kind == "package"] == [
        "spconv-cu${cuda_version_no_dot}", "cupy-cuda${cuda_version/./}x", "cumm-cu$cu", "numpy"
    ]


def test_an_index_after_a_requirement_on_its_line_is_read(tmp_path: Path) -> None:
    text = "torch-scatter -f https://data.pyg.org/whl/torch-2.1.0+cu121.html\nnumpy --extra-index-url=https://x.org/s\n"
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, text)
    assert _items(doc, "index") == [("https://data.pyg.org/whl/torch-2.1.0+cu121.html", 1, 18), ("https://x.org/s", 2, 25)]
    assert [i.name for i in doc.manifest if i.kind == "package"] == ["torch-scatter", "numpy"]


def test_dockerfile_continuations_comments_and_exec_form(tmp_path: Path) -> None:
    text = (
        "FROM --platform=linux/amd64 nvidia/cuda:12.1.1-devel-ubuntu22.04 AS build\n"
        "RUN apt-get install -y \\\n"
        "    # comment lines vanish inside a continuation\n"
        "        libcudnn8-dev\n"
        'RUN ["bash", "-c", "nvidia-smi"]\n'
        "ENV A=1 CUDA_HOME=/usr/local/cuda\n"
    )
    doc = _parse(tmp_path, "Dockerfile", FileKind.DOCKERFILE, text)
    assert _items(doc, "image") == [("nvidia/cuda:12.1.1-devel-ubuntu22.04", 1, 29)]
    command = next(i for i in doc.manifest if i.name == "apt-get")
    assert command.args == ("install", "-y", "libcudnn8-dev") and command.positions[-1] == (4, 9)
    assert ("nvidia-smi", 5, 5) in _items(doc, "command")
    assert _items(doc, "env") == [("A", 6, 5), ("CUDA_HOME", 6, 9)]


def test_dockerfile_dangling_continuation_is_a_skip(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "Dockerfile", FileKind.DOCKERFILE, "FROM python:3.11\nRUN pip install flash-attn \\\n")
    assert doc == Skipped("Dockerfile", "dangling line continuation at end of file (instruction at line 2)")


def test_makefile_assignments_and_recipes(tmp_path: Path) -> None:
    text = "# nvcc\nNVCC ?= nvcc\nFLAGS = -O3 -arch=sm_90\n\nall:\n\t@nvidia-smi\n"
    doc = _parse(tmp_path, "Makefile", FileKind.MAKEFILE, text)
    assert ("nvcc", 2, 9) in _items(doc, "command") and ("nvidia-smi", 6, 3) in _items(doc, "command")
    assert [(i.value, i.line) for i in doc.manifest if i.kind == "fact"] == [("-arch=sm_90", 3)]


def test_makefile_target_specific_assignments_are_read_as_assignments(tmp_path: Path) -> None:
    """`goal: VAR += value` adds flags for one make goal: its value is read as an assignment's, at its own column;
    a rule's prerequisites are not (the .cu file among them is a CUDA-source fact)."""
    text = "debug: NVFLAGS += -G -arch=sm_70\nfast: export NVCC := nvcc\nkern.o: kern.cu sm_70.h\n"
    doc = _parse(tmp_path, "Makefile", FileKind.MAKEFILE, text)
    assert [(i.value, i.line, i.column) for i in doc.manifest if i.kind == "fact"] == [("-arch=sm_70", 1, 22), ("kern.cu", 3, 9)]
    assert ("nvcc", 2, 22) in _items(doc, "command")


def test_makefile_tab_led_assignments_before_any_rule_are_assignments(tmp_path: Path) -> None:
    """Outside a rule GNU make reads a tab-led line as make syntax (a conditional block's indented assignments);
    after a rule's target line the same line is a recipe: `NVCC=nvcc` there sets a shell variable."""
    text = "ifeq ($(X),)\n\tNVCC = nvcc\nelse\n\tNVCC := $(X)/bin/nvcc\nendif\nall: k\n\tNVCC=nvcc ./build.sh\n"
    doc = _parse(tmp_path, "Makefile", FileKind.MAKEFILE, text)
    commands = [(i.name, i.line, i.column) for i in doc.manifest if i.kind == "command"]
    assert [c for c in commands if c[0] == "nvcc"] == [("nvcc", 2, 9), ("nvcc", 4, 14)]
    assert ("build.sh", 7, 12) in commands


def test_makefile_conditions_read_their_shell_calls_only(tmp_path: Path) -> None:
    """`ifneq ($(shell which nvcc),)` runs a probe to choose a branch; $(NVCC) there reads as nvcc, padded so the
    columns after it stay true; a condition that runs nothing gives no item."""
    text = "ifeq ($(shell which $(NVCC) 2>/dev/null),)\nelse ifneq ($(shell command -v nvcc),)\nifeq ($(GPU),1)\nendif\n"
    doc = _parse(tmp_path, "Makefile", FileKind.MAKEFILE, text)
    assert [(i.name, i.args[:2], i.line, i.column) for i in doc.manifest] == [
        ("shell", ("which", "nvcc"), 1, 9), ("shell", ("command", "-v"), 2, 15)]
    assert doc.manifest[0].positions[:2] == ((1, 15), (1, 21)) and doc.manifest[0].args[2] == "2"


def test_markdown_reads_code_blocks_never_prose(tmp_path: Path) -> None:
    text = (
        "Run `nvidia-smi`, then pip install flash-attn.\n\n"
        "```bash\npip install flash-attn\n```\n\n"
        "```python\nsubprocess.run(['nvidia-smi'])\n```\n\n"
        "```console\n$ nvidia-smi\n| NVIDIA-SMI 535 |\n```\n"
    )
    doc = _parse(tmp_path, "README.md", FileKind.MARKDOWN, text)
    assert _items(doc, "package") == [("flash-attn", 4, 13)]
    assert [c for c in _items(doc, "command") if c[0] == "nvidia-smi"] == [("nvidia-smi", 12, 3)]


def test_markdown_reads_inline_installs_of_cuda_builds_but_not_other_inline_code(tmp_path: Path) -> None:
    """A bullet that quotes the install of a CUDA build inline (a wheel index, +cuXXX, a conda CUDA toolkit) is an
    instruction; a bare `pip install x` in a sentence, `nvidia-smi` or a Python span stays prose."""
    text = (
        "* Install torch by `pip install torch==1.11.0 --extra-index-url https://download.pytorch.org/whl/cu113`\n"
        "* Then `conda create -n nerf python=3.8` and `conda install cudatoolkit=11.3 -c pytorch`\n"
        "Run `pip install flash-attn` only for speed; check `nvidia-smi -L` and `torch.cuda.is_available()`.\n"
    )
    doc = _parse(tmp_path, "README.md", FileKind.MARKDOWN, text)
    assert _items(doc, "package") == [("torch", 1, 33), ("cudatoolkit", 2, 61)]
    assert [name for name, _, _ in _items(doc, "command")] == ["pip", "conda"]


def test_markdown_reads_list_steps_that_are_one_install_command(tmp_path: Path) -> None:
    """A list item that is nothing but an inline install (a stop or a note in parentheses may close it) is a step to
    run; an item whose sentence goes on after the span, an inline install in prose, or a non-install span is not."""
    text = (
        "1. `python -m pip install onnxruntime-gpu`\n"
        "    b. `pip install cuda-python`.\n"
        "- `pip install flash-attn --no-build-isolation` (only for the fast path)\n"
        "- `pip install xformers` is optional and slower to build\n"
        "Then `pip install triton` as usual.\n"
        "- `source .venv/bin/activate`\n"
    )
    doc = _parse(tmp_path, "README.md", FileKind.MARKDOWN, text)
    assert _items(doc, "package") == [("onnxruntime-gpu", 1, 27), ("cuda-python", 2, 21), ("flash-attn", 3, 16)]


def test_markdown_reads_an_install_span_that_ends_a_lead_in_with_a_colon(tmp_path: Path) -> None:
    """"Install X: `pip install ...`" (a stop may close it) gives the step to run; a colon followed by a span that a
    sentence goes on from, or a span without a colon before it, stays prose."""
    text = (
        "- Install the encoder extension: `pip install git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=b`\n"
        "and then install it with: `pip install nerfacc`.\n"
        "Note: `pip install xformers` is not needed here.\n"
        "We used `pip install triton`\n"
    )
    doc = _parse(tmp_path, "README.md", FileKind.MARKDOWN, text)
    assert [(name, line) for name, line, _ in _items(doc, "package")] == [("tiny-cuda-nn", 1), ("nerfacc", 2)]


def test_markdown_reads_windows_and_commandline_shell_fences_but_not_other_languages(tmp_path: Path) -> None:
    """Install steps under ```commandline, ```cmd or ```powershell are commands users run; a ```text or ```yaml
    block that happens to hold the same words is not."""
    text = (
        "```commandline\nexport CUDA_HOME=/usr/local/cuda-11.4\nconda install -c nvidia cuda-nvcc\n```\n\n"
        "```powershell\npip install xformers==0.0.20\n```\n\n"
        "```cmd\npip install flash-attn\n```\n\n"
        "```text\npip install bitsandbytes\n```\n\n"
        "```yaml\n- pip install apex\n```\n"
    )
    doc = _parse(tmp_path, "README.md", FileKind.MARKDOWN, text)
    assert [(name, line) for name, line, _ in _items(doc, "package")] == [
        ("cuda-nvcc", 3), ("xformers", 7), ("flash-attn", 11)]


# --- TOML, setup.py, YAML, CMake ----------------------------------------------------------------


def test_pyproject_dependencies_and_indexes(tmp_path: Path) -> None:
    text = (
        '[project]\nname = "x"\ndescription = "cuda kernels for cuda-utils"\n'
        'dependencies = ["flash-attn>=2.5"]\n'
        '[[tool.uv.index]]\nname = "cu"\nurl = "https://download.pytorch.org/whl/cu121"\n'
        '[tool.poetry.dependencies]\ntorch = { version = "2.3.1+cu121" }\n'
    )
    doc = _parse(tmp_path, "pyproject.toml", FileKind.PYPROJECT, text)
    assert [(i.name, i.line, i.local) for i in doc.manifest if i.kind == "package"] == [
        ("flash-attn", 4, ""), ("torch", 9, "cu121")
    ]
    assert _items(doc, "index") == [("https://download.pytorch.org/whl/cu121", 7, 7)]


def test_invalid_toml_is_a_skip(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "pyproject.toml", FileKind.PYPROJECT, '[project]\nname = "x\n')
    assert isinstance(doc, Skipped) and doc.reason.startswith("invalid TOML:")


def test_setup_py_facts(tmp_path: Path) -> None:
    text = (
        '"""Needs -gencode (docstring)."""\n'
        "import os\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
        'os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"\n'
        "if CUDA_HOME:\n"
        '    ext = [CUDAExtension("m", ["k.cu"], extra_compile_args={"nvcc": ["-gencode", "arch=compute_80,code=sm_80"]})]\n'
        'setup(install_requires=["flash-attn"])\n'
    )
    doc = _parse(tmp_path, "setup.py", FileKind.SETUP_PY, text)
    facts = [(i.name, i.line) for i in doc.manifest if i.kind == "fact"]
    assert facts == [("cuda-home-gate", 5), ("cuda-extension", 6), ("nvcc-arch-flag", 6)]
    assert _items(doc, "env") == [("TORCH_CUDA_ARCH_LIST", 4, 13)]
    assert _items(doc, "package") == [("flash-attn", 7, 26)]


def test_setup_py_extras_filled_one_key_at_a_time(tmp_path: Path) -> None:
    text = (
        "extras = {}\n"
        'extras["gpu"] = ["flash-attn>=2.5", "einops"]\n'
        'extras["gpu"] += ["xformers"]\n'
        'extras["all"] = {d for k, v in extras.items() for d in v if k not in {"skip-me"}}\n'
        'other = {}\nother["x"] = ["vllm"]\n'
        "setup(extras_require=extras)\n"
    )
    doc = _parse(tmp_path, "setup.py", FileKind.SETUP_PY, text)
    assert _items(doc, "package") == [("flash-attn", 2, 19), ("einops", 2, 38), ("xformers", 3, 20)]


def test_setup_py_syntax_error_is_a_skip(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "setup.py", FileKind.SETUP_PY, "setup(name='x'\n")
    assert isinstance(doc, Skipped) and doc.reason.startswith("Python syntax error at line 1")


def test_yaml_kubernetes_is_decided_by_content(tmp_path: Path) -> None:
    k8s = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - resources:\n        limits:\n          nvidia.com/gpu: 1\n"
    helm = "resources:\n  limits:\n    nvidia.com/gpu: 1\n"
    assert _items(_parse(tmp_path, "k8s/pod.yaml", FileKind.YAML, k8s), "fact") == [("gpu-resource", 7, 11)]
    assert _parse(tmp_path, "chart/values.yaml", FileKind.YAML, helm).manifest == []


def test_workflow_runner_labels_in_each_spelling(tmp_path: Path) -> None:
    text = ("jobs:\n  a:\n    runs-on: ubuntu-22.04\n  b:\n    runs-on: [self-hosted, nvidia]\n"
            "  c:\n    runs-on:\n      group: gpus\n      labels: h100\n  d:\n    runs-on: ${{ matrix.os }}\n")
    doc = _parse(tmp_path, ".github/workflows/ci.yml", FileKind.CI_WORKFLOW, text)
    runners = [(i.value, i.line) for i in doc.manifest if i.kind == "fact" and i.name == "ci-runner"]
    assert runners == [("ubuntu-22.04", 3), ("self-hosted", 5), ("nvidia", 5), ("h100", 9), ("${{ matrix.os }}", 11)]


YAML_SHAPES = [
    "jobs:\n  a:\n    steps:\n      - run: |\n          pip install cupy-cuda12x\n          nvcc -V\n"
    "      - run: pip install cupy-cuda11x\n      - run: 'pip install cupy-cuda10x'\n",
    "env:\n  A: 'single'\n  B: \"double\"\n  C: >\n    folded\n    text\n  D: plain  # comment\n",
    "base: &b {image: nvidia/cuda:12.4.0-devel, tags: [a, b]}\nother:\n  <<: *b\n  more: *b\n",
    "a: 1\r\nb:\r\n- x\r\n- 'y'\r\n---\nsecond: doc\n",
    "k: \u00e9t\u00e9 \u2028 v\nl: [1, 2]\n",
]


def _yaml_shape(node: Node, seen: dict[int, int]) -> object:
    """What the YAML parser's readers use of NODE: kind, tag, value, style, where it starts; an alias as the node it
    repeats."""
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    head = (type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column)
    if isinstance(node, ScalarNode):
        return (*head, node.value, node.style or None)  # a plain scalar's style: libyaml's "", PyYAML's None
    if isinstance(node, MappingNode):
        return (*head, [(_yaml_shape(k, seen), _yaml_shape(v, seen)) for k, v in node.value])
    return (*head, [_yaml_shape(item, seen) for item in node.value])


@pytest.mark.parametrize("text", YAML_SHAPES)
def test_yaml_is_composed_by_libyaml_into_the_nodes_the_pure_loader_makes(text: str) -> None:
    pure = [node for node in yaml.compose_all(text, Loader=yaml.SafeLoader) if node is not None]
    composed = yamlfiles._compose(text)
    seen: dict[int, int] = {}
    expected: dict[int, int] = {}
    assert [_yaml_shape(root, seen) for root in composed] == [_yaml_shape(root, expected) for root in pure]


def test_workflow_scalar_items_keep_their_columns(tmp_path: Path) -> None:
    doc = _parse(tmp_path, ".github/workflows/ci.yml", FileKind.CI_WORKFLOW, YAML_SHAPES[0])
    assert [(i.name, i.line, i.column) for i in doc.manifest if i.kind == "package"] == [
        ("cupy-cuda12x", 5, 23), ("cupy-cuda11x", 7, 26), ("cupy-cuda10x", 8, 27)]  # past a quoted scalar's quote


def test_invalid_yaml_is_a_skip(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "environment.yml", FileKind.CONDA, "dependencies:\n  - [pip\n")
    assert isinstance(doc, Skipped) and doc.reason.startswith("invalid YAML at line 3")


def test_cmake_commands_arguments_and_comments(tmp_path: Path) -> None:
    text = '# enable_language(CUDA)\nproject(x LANGUAGES CXX CUDA)\n#[[ find_package(CUDA) ]]\ntarget_link_libraries(x\n  CUDA::cublas)\n'
    doc = _parse(tmp_path, "CMakeLists.txt", FileKind.CMAKE, text)
    calls = [(i.name, i.line, i.args) for i in doc.manifest if i.kind == "cmake"]
    assert calls == [("project", 2, ("x", "LANGUAGES", "CXX", "CUDA")), ("target_link_libraries", 4, ("x", "CUDA::cublas"))]
    assert doc.manifest[-1].positions == ((4, 23), (5, 3))
    assert isinstance(_parse(tmp_path, "CMakeLists.txt", FileKind.CMAKE, "project(x\n"), Skipped)


# --- the demo repository, end to end -------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> dict:
    from conftest import REPOS

    result = scan(REPOS / "manifests-demo", Settings(jobs=1, targets=("gfx942", "gfx1100")))
    from migrate.assessment import assess
    from migrate.report.json import as_dict

    return as_dict(assess(result))


def test_demo_malformed_files_are_skipped_and_the_rest_scanned(demo: dict) -> None:
    assert {s["path"] for s in demo["skipped"]} == {
        "docker/Dockerfile.dev", "environment-broken.yml", "legacy/setup.py", "requirements-dev.txt",
        "tools/broken/pyproject.toml",
    }
    assert demo["summary"]["files_scanned"] >= 15


def test_demo_every_file_kind_reports(demo: dict) -> None:
    paths = {f["path"] for f in demo["findings"]}
    assert paths >= {
        "requirements.txt", "constraints.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "environment.yml",
        "Dockerfile", "docker-compose.yml", "k8s/deployment.yaml", ".github/workflows/ci.yml", ".gitlab-ci.yml",
        "CMakeLists.txt", "cmake/cuda.cmake", "Makefile", "scripts/train.sh", "README.md", "docs/install.rst",
    }
    categories = {f["category"] for f in demo["findings"]}
    assert categories >= {"cuda-only-dependency", "cuda-index-url", "cpp-extension-build", "cuda-build-config",
                          "nvidia-docker", "nvidia-runtime-tool", "env-var", "tensorrt"}


def test_demo_look_alikes_stay_quiet(demo: dict) -> None:
    by_line = {(f["path"], f["line"]) for f in demo["findings"]}
    assert ("requirements.txt", 7) not in by_line  # cuda-utils
    assert ("requirements.txt", 8) not in by_line  # a commented-out requirement
    assert not [f for f in demo["findings"] if f["path"] == "pyproject.toml" and f["line"] == 7]  # description
    assert not [f for f in demo["findings"] if f["path"] == "README.md" and f["line"] < 9]  # prose


def test_demo_substitutions_answer_findings_per_target(demo: dict) -> None:
    subs = {s["id"]: s for s in demo["substitutions"]}
    flash = subs["flash-attn"]
    assert {"rule": "flash-attn-dependency", "path": "requirements.txt"} in flash["answers"]
    assert [t["target"] for t in flash["targets"]] == ["gfx942", "gfx1100"]
    assert flash["sources"] and flash["as_of"]
    assert subs["torch-cpp-extension"]["install"] == ['PYTORCH_ROCM_ARCH="gfx942;gfx1100" pip install . --no-build-isolation']
    named = {s for f in demo["findings"] for s in f.get("substitutions", [])}
    assert named == set(subs)
    assert [t["wavefront"] for t in demo["target_support"]] == [64, 32]


# --- command line ---------------------------------------------------------------------------------


def test_explain_substitution_and_rule() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["explain", "torch-cpp-extension", "--target", "gfx942,gfx1100"])
    assert result.exit_code == 0
    assert '\n    PYTORCH_ROCM_ARCH="gfx942;gfx1100" pip install . --no-build-isolation\n' in result.output
    assert "sources (as of" in result.output
    rule = runner.invoke(cli, ["explain", "nvcc-arch-flags"])
    assert rule.exit_code == 0 and rule.output.startswith("rule nvcc-arch-flags: ")


def test_explain_unknown_and_dropped_ids_exit_2() -> None:
    runner = CliRunner()
    unknown = runner.invoke(cli, ["explain", "no-such-thing"])
    assert unknown.exit_code == 2 and "no rule, substitution or target named 'no-such-thing'" in unknown.output
    dropped = runner.invoke(cli, ["explain", "tgi"])
    assert dropped.exit_code == 2 and "archived project" in dropped.output


def test_rules_lists_every_rule() -> None:
    from migrate.ruleset import load_builtin

    result = CliRunner().invoke(cli, ["rules"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split() == ["id", "severity", "category", "title"]
    assert len(lines) == len(load_builtin().rules) + 1
    assert any(line.split()[:3] == ["k8s-nvidia-gpu-resource", "medium", "nvidia-docker"] for line in lines)


def test_unknown_target_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["scan", str(tmp_path), "--target", "gfx942,gfx9999"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "unknown target gfx9999 (known targets: gfx906" in result.output


def test_json_output_has_substitutions(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn==2.5.8\n")
    result = CliRunner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "--no-cache", "--target", "gfx1100"])
    data = json.loads(result.stdout)
    assert [s["id"] for s in data["substitutions"]] == ["flash-attn"]
    assert data["findings"][0]["substitutions"] == ["flash-attn"]


def test_requirements_urls_paths_and_editables(tmp_path: Path) -> None:
    text = (
        "-e .\n"
        "-e git+https://github.com/NVIDIA/apex.git#egg=apex\n"
        "git+https://github.com/Dao-AILab/flash-attention.git@v2.5.8\n"
        "./wheels/local_pkg\n"
        "--find-links ./wheels\n"
    )
    doc = _parse(tmp_path, "requirements.txt", FileKind.REQUIREMENTS, text)
    assert [(i.kind, i.name, i.line) for i in doc.manifest] == [
        ("package", "apex", 2), ("package", "flash-attention", 3), ("index", "./wheels", 5)
    ]


def test_dockerfile_from_expands_arg_defaults(tmp_path: Path) -> None:
    # the image is spelled on the ARG line: that is where it is reported (and edited), once for both stages
    text = "ARG BASE=nvidia/cuda:12.4.1-runtime-ubuntu22.04\nFROM ${BASE} AS build\nFROM $BASE\n"
    doc = _parse(tmp_path, "Dockerfile", FileKind.DOCKERFILE, text)
    assert _items(doc, "image") == [("nvidia/cuda:12.4.1-runtime-ubuntu22.04", 1, 5)]


@pytest.mark.parametrize("text, expected", [
    # a default word inside FROM itself: the FROM line spells the image
    ("ARG BASE_IMAGE\nFROM ${BASE_IMAGE:-nvidia/cuda:11.8.0-runtime-ubuntu20.04}\n",
     [("nvidia/cuda:11.8.0-runtime-ubuntu20.04", 2, 6)]),
    # a set ARG wins over the default word
    ("ARG BASE_IMAGE=ubuntu:22.04\nFROM ${BASE_IMAGE:-nvidia/cuda:11.8.0-runtime-ubuntu20.04}\n",
     [("ubuntu:22.04", 2, 6)]),
    # ${VERSION:+word}: the image a CUDA variant of the build names, its own references expanded
    ("ARG CUDA=12.1.1\nARG OS=22.04\nARG BASE=${CUDA:+\"nvidia/cuda:${CUDA}-devel-ubuntu${OS}\"}\n"
     "ARG BASE=${BASE:-\"ubuntu:${OS}\"}\nFROM ${BASE}\n",
     [("nvidia/cuda:12.1.1-devel-ubuntu22.04", 3, 5)]),
    # an ARG naming a tag only: FROM spells the image, and reports it
    ("ARG TAG=12.4.1-devel-ubuntu22.04\nFROM nvidia/cuda:${TAG}\n", [("nvidia/cuda:12.4.1-devel-ubuntu22.04", 2, 6)]),
    # an unknown ARG stays as written
    ("FROM ${UNSET_BASE}\n", [("${UNSET_BASE}", 1, 6)]),
    # an ARG defaulting to empty takes no `:+` suffix (one Dockerfile for x86 and, with ARCH=ppc64le, POWER)
    ("ARG ARCH=\nARG CUDA=11.2\nFROM nvidia/cuda${ARCH:+-$ARCH}:${CUDA}.1-base\n", [("nvidia/cuda:11.2.1-base", 3, 6)]),
    ("ARG ARCH=ppc64le\nFROM nvidia/cuda${ARCH:+-$ARCH}:11.2.1-base\n", [("nvidia/cuda-ppc64le:11.2.1-base", 2, 6)]),
    # without the colon, an ARG set to empty is still set: the word stays
    ("ARG ARCH=\nFROM nvidia/cuda${ARCH+-gl}:11.2.1-base\n", [("nvidia/cuda-gl:11.2.1-base", 2, 6)]),
])
def test_dockerfile_arg_expansion_forms(tmp_path: Path, text: str, expected: list[tuple]) -> None:
    doc = _parse(tmp_path, "Dockerfile", FileKind.DOCKERFILE, text)
    assert _items(doc, "image") == expected


def test_gitlab_image_mapping_and_services(tmp_path: Path) -> None:
    text = "build:\n  image:\n    name: nvidia/cuda:12.1.0-devel-ubuntu22.04\n  services:\n    - docker:dind\n"
    doc = _parse(tmp_path, ".gitlab-ci.yml", FileKind.CI_WORKFLOW, text)
    assert _items(doc, "image") == [("nvidia/cuda:12.1.0-devel-ubuntu22.04", 3, 11)]


def test_dockerfile_heredoc_run_is_shell(tmp_path: Path) -> None:
    text = "FROM python:3.11\nRUN <<EOF\nset -e\npip install flash-attn \\\n  --no-build-isolation\nEOF\nRUN echo done\n"
    doc = _parse(tmp_path, "Dockerfile", FileKind.DOCKERFILE, text)
    assert _items(doc, "package") == [("flash-attn", 4, 13)]
    assert [c[0] for c in _items(doc, "command")] == ["pip", "echo"]


def test_explain_target() -> None:
    result = CliRunner().invoke(cli, ["explain", "gfx1100"])
    assert result.exit_code == 0
    assert result.output.startswith("target gfx1100: RDNA RDNA3, wavefront 32-wide by default")
    assert "gfx1100: supported on Linux by ROCm 7.0-7.2 and ROCm Core SDK 7.14-10.1." in result.output


def test_container_tools_name_images_in_shell() -> None:
    text = (
        "docker run --rm -v data/x:/y -p 8000:8000 nvcr.io/nvidia/pytorch:24.01-py3 python t.py\n"
        "apptainer pull docker://nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
        "srun --container-image=nvcr.io#nvidia/nemo:24.05 python t.py\n"
        "echo nvcr.io/nvidia/pytorch:24.01-py3\n"
    )
    images = [(i.name, i.line, i.column) for i in shell_items(text, Positions(text).at) if i.kind == "image"]
    assert images == [
        ("nvcr.io/nvidia/pytorch:24.01-py3", 1, 43),
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", 2, 16),
        ("nvcr.io/nvidia/nemo:24.05", 3, 24),
    ]


def test_cog_yaml_gpu_cuda_packages_and_run(tmp_path: Path) -> None:
    text = (
        "build:\n  gpu: true\n  cuda: '12.1'\n  python_packages:\n    - torch==2.3.1\n    - bitsandbytes==0.43.1\n"
        "  run:\n    - nvidia-smi\n    - command: pip install xformers\npredict: predict.py:Predictor\n"
    )
    doc = _parse(tmp_path, "cog.yaml", FileKind.COG, text)
    assert _items(doc, "fact") == [("cog-gpu", 2, 8), ("cog-cuda", 3, 10)]
    assert _items(doc, "package") == [("torch", 5, 7), ("bitsandbytes", 6, 7), ("xformers", 9, 28)]
    assert ("nvidia-smi", 8, 7) in _items(doc, "command")


def test_other_yaml_reports_only_image_keys(tmp_path: Path) -> None:
    text = "job:\n  container_image: nvcr.io/nvidia/pytorch:24.01-py3\n  note: nvidia/cuda:12.1.0-devel\n  image_dir: data/x\n"
    doc = _parse(tmp_path, "launch.yaml", FileKind.YAML, text)
    assert [i.kind for i in doc.manifest] == ["image"]
    assert _items(doc, "image") == [("nvcr.io/nvidia/pytorch:24.01-py3", 2, 20)]


def test_pyproject_same_requirement_in_two_groups_has_two_lines(tmp_path: Path) -> None:
    text = (
        '[project]\nname = "x"\ndependencies = []\n[project.optional-dependencies]\n'
        'quant = [\n  "bitsandbytes>=0.45.1",\n]\nall = [\n  "bitsandbytes>=0.45.1",\n]\n'
    )
    doc = _parse(tmp_path, "pyproject.toml", FileKind.PYPROJECT, text)
    assert _items(doc, "package") == [("bitsandbytes", 6, 3), ("bitsandbytes", 9, 3)]


def test_dependency_file_packages_by_output_type(tmp_path: Path) -> None:
    """rapids-dependency-file-generator's dependencies.yaml: packages of conda entries are conda specs, the others
    pip requirements, in `packages:` directly or in `matrices:`; a file without `files:` is not one."""
    text = ("files:\n  all:\n    output: conda\ndependencies:\n  run:\n    common:\n      - output_types: conda\n"
            "        packages:\n          - cuda-version=12.9\n    specific:\n      - output_types: [requirements]\n"
            "        matrices:\n          - matrix: {cuda: '12.*'}\n            packages:\n              - cupy-cuda12x>=13\n")
    doc = _parse(tmp_path, "dependencies.yaml", FileKind.CONDA, text)
    assert [(i.name, i.line, i.args) for i in doc.manifest] == [("cuda-version", 9, ("conda",)), ("cupy-cuda12x", 15, ())]
    other = _parse(tmp_path, "dependencies.yaml", FileKind.CONDA, "dependencies:\n  run:\n    common: []\n")
    assert other.manifest == []


def test_batch_directives_and_shifter_name_images() -> None:
    """`#SBATCH --image=` / `--container-image` directives name the job's image; `##SBATCH` is switched off; shifter's
    `docker:` prefix is dropped."""
    text = (
        "#!/bin/bash\n"
        "#SBATCH --image=nersc/pytorch:ngc-22.02-v0\n"
        "##SBATCH --image=nersc/pytorch:ngc-21.08-v2\n"
        "#SBATCH --container-image nvcr.io#nvidia/pytorch:24.05-py3\n"
        "#SBATCH --container-mounts=/data:/data\n"
        "srun shifter --image=docker:weatherlab/model:1.2 python run.py\n"
    )
    images = [(i.name, i.line, i.column) for i in shell_items(text, Positions(text).at) if i.kind == "image"]
    assert images == [
        ("weatherlab/model:1.2", 6, 22),
        ("nersc/pytorch:ngc-22.02-v0", 2, 17),
        ("nvcr.io/nvidia/pytorch:24.05-py3", 4, 27),
    ]


def test_recipe_cuda_compiler_and_driver_virtual_package(tmp_path: Path) -> None:
    """A recipe's {{ compiler('cuda') }} reads as the cuda-nvcc package it renders to, in requirements only; the
    __cuda virtual package is a package line of its own."""
    text = (
        "build:\n  ignore_run_exports_from:\n    - {{ compiler('cuda') }}\n"
        "requirements:\n  build:\n    - {{ compiler('c') }}\n    - {{compiler(\"cuda\")}}\n"
        "  run:\n    - __cuda >={{ cuda_min }}\n"
    )
    doc = _parse(tmp_path, "meta.yaml", FileKind.CONDA, text)
    # {{ compiler('c') }} stays a blank expression (a run of zeros), as every other Jinja expression does
    assert _items(doc, "package") == [("0" * 19, 6, 7), ("cuda-nvcc", 7, 7), ("__cuda", 9, 7)]
