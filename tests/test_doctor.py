"""`migrate doctor` on a bare machine and on one with fake ROCm tools, GPUs and a PyTorch build."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate import doctor
from migrate.cli import cli

from conftest import require_tool

HIPCC = """#!/bin/sh
if [ "$HIP_PLATFORM" = amd ]; then echo "HIP version: 6.2.41133-dd7f95766"; echo "AMD clang version 18.0.0"
else echo "nvcc: NVIDIA (R) Cuda compiler driver"; fi
"""
ROCMINFO = """#!/bin/sh
printf '\\033[32mROCk module is loaded\\033[0m\\n'
printf 'Agent 1\\n  Name:                    AMD EPYC 9654\\nAgent 2\\n  Name:                    gfx942\\n'
printf '  Marketing Name:          AMD Instinct MI300X\\nAgent 3\\n  Name:                    gfx942\\n'
"""
FAILING_ROCMINFO = "#!/bin/sh\necho 'ROCk module is NOT loaded, possibly no GPU devices'\nexit 1\n"
ROCM_TORCH = '#!/bin/sh\necho \'{"version": "2.4.0+rocm6.1", "cuda": null, "hip": "6.1.40091"}\'\n'
CUDA_TORCH = '#!/bin/sh\necho \'{"version": "2.4.0+cu121", "cuda": "12.1", "hip": null}\'\n'


def script(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_bare_machine_says_not_found(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    found = doctor.diagnose({"PATH": str(empty)}, opt=tmp_path / "opt", python=sys.executable)
    assert [(t.name, t.path) for t in found.tools] == [("hipify-clang", None), ("hipify-perl", None), ("hipcc", None)]
    assert found.rocm_path is None and found.rocm_version == "not found"
    assert found.gpus == () and found.gpu_note == "none detected (rocminfo not found; amd-smi not found)"
    assert "builtin engine" in found.apply_engine
    assert found.verify_with.startswith("nothing: hipcc not found")
    text = doctor.render_text(found)
    assert "  hipcc         not found\n" in text and "ROCm\n" in text


def test_full_machine(tmp_path: Path) -> None:
    rocm = tmp_path / "opt" / "rocm-6.2.0"
    script(rocm / "bin", "hipcc", HIPCC)
    script(rocm / "bin", "hipify-perl", "#!/bin/sh\necho 'hipify-perl version 6.2'\n")
    script(rocm / "bin", "rocminfo", ROCMINFO)
    (rocm / ".info").mkdir()
    (rocm / ".info" / "version").write_text("6.2.0-110\n")
    python = script(tmp_path / "py", "python", ROCM_TORCH)
    found = doctor.diagnose({"PATH": str(tmp_path / "nothing")}, opt=tmp_path / "opt", python=str(python))
    tools = {t.name: t for t in found.tools}
    assert tools["hipcc"].path == str(rocm / "bin" / "hipcc")
    assert tools["hipcc"].version == "HIP version: 6.2.41133-dd7f95766"  # asked with HIP_PLATFORM=amd
    assert tools["hipify-perl"].version == "hipify-perl version 6.2"
    assert tools["hipify-clang"].path is None
    assert (found.rocm_path, found.rocm_version) == (str(rocm), "6.2.0-110")
    assert found.gpus == ("gfx942",) and found.gpu_note == "from rocminfo"
    assert found.torch == "torch 2.4.0+rocm6.1, ROCm/HIP build (HIP 6.1.40091)"
    assert found.apply_engine.startswith("hipify-perl (")
    assert found.verify_with == f"HIP_PLATFORM=amd {rocm / 'bin' / 'hipcc'} -fsyntax-only --offload-arch=gfx942"
    assert json.loads(doctor.render_json(found))["gpus"] == ["gfx942"]


def test_rocm_path_wins_and_version_from_header(tmp_path: Path) -> None:
    (tmp_path / "opt" / "rocm").mkdir(parents=True)
    custom = tmp_path / "custom"
    header = custom / "include" / "rocm-core"
    header.mkdir(parents=True)
    (header / "rocm_version.h").write_text(
        "#define ROCM_VERSION_MAJOR   6\n#define ROCM_VERSION_MINOR   3\n#define ROCM_VERSION_PATCH   1\n"
    )
    env = {"PATH": "", "ROCM_PATH": str(custom)}
    assert doctor.find_rocm(env, tmp_path / "opt") == custom
    assert doctor.rocm_version(custom) == "6.3.1"
    assert doctor.find_rocm({"PATH": ""}, tmp_path / "opt") == tmp_path / "opt" / "rocm"


def test_newest_versioned_rocm_and_core_layout(tmp_path: Path) -> None:
    for name in ("rocm-5.7.1", "rocm-6.10.0", "rocm-6.2.0"):
        (tmp_path / name).mkdir()
    assert doctor.find_rocm({}, tmp_path) == tmp_path / "rocm-6.10.0"
    assert doctor.rocm_version(tmp_path / "rocm-6.10.0") == "6.10.0"


def test_failing_rocminfo_and_cuda_torch(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    script(bin_dir, "rocminfo", FAILING_ROCMINFO)
    python = script(tmp_path / "py", "python", CUDA_TORCH)
    found = doctor.diagnose({"PATH": str(bin_dir)}, opt=tmp_path / "opt", python=str(python))
    assert found.gpus == ()
    assert found.gpu_note == (
        "none detected (rocminfo: ROCk module is NOT loaded, possibly no GPU devices; amd-smi not found)"
    )
    assert found.torch.startswith("torch 2.4.0+cu121, CUDA build (CUDA 12.1)")


def test_torch_probe_in_the_current_interpreter(tmp_path: Path) -> None:
    text = doctor.torch_build(sys.executable, {"PATH": ""})
    assert text.startswith(("torch ", "cannot import torch"))
    broken = script(tmp_path / "py", "python", "#!/bin/sh\necho 'ImportError: libcuda.so.1' >&2\nexit 1\n")
    assert doctor.torch_build(str(broken), {}) == f"cannot import torch in {broken}: ImportError: libcuda.so.1"


def test_doctor_command_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0
    assert result.stdout.startswith("Tools\n  hipify-clang  not found\n")
    assert "What migrate would use\n  apply" in result.stdout
    as_json = CliRunner().invoke(cli, ["doctor", "--format", "json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["tools"][2]["name"] == "hipcc"


@pytest.mark.slow
def test_real_hipcc_is_asked_as_amd() -> None:
    path = require_tool("hipcc")
    tools = {t.name: t for t in doctor.diagnose().tools}
    assert tools["hipcc"].path == path
    assert "HIP version" in tools["hipcc"].version  # without HIP_PLATFORM=amd Debian's hipcc reports nvcc
