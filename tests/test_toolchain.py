"""The ROCm release a port targets: --rocm, the repository's `rocm` setting, else the installed toolchain's."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.errors import ConfigError
from migrate.config import load_settings
from migrate.toolchain import RocmTarget, choose_rocm, detect_installed, major_minor

from conftest import FIXTURES, init_repo, require_tool

WARP = FIXTURES / "translate" / "input" / "warp.cu"
NOTHING_FOUND = "no ROCm toolchain found: hipcc, hipconfig, a ROCm install, a ROCm PyTorch"


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _bare(tmp_path, monkeypatch)


def _bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with no ROCm tool and no python3, no ROCm install variables: what a machine without ROCm shows."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for key in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"):
        monkeypatch.delenv(key, raising=False)
    if Path("/opt/rocm").exists():
        pytest.skip("/opt/rocm exists on this machine")
    return empty


def _torch_package(root: Path, hip: str | None) -> Path:
    """A torch package as pip lays it out, as far as torch/version.py goes (never imported)."""
    package = root / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('the probe must never import torch')\n")
    (package / "version.py").write_text(
        "from typing import Optional\n\n__version__ = '2.5.1+rocm6.1'\ndebug = False\n"
        f"cuda: Optional[str] = None\nhip: Optional[str] = {hip!r}\n")
    return package


def test_major_minor() -> None:
    assert [major_minor(t) for t in ("5.2.21153-0", "6.1.40091-a8dbc0c19", " 6.2.4\n", "10.1", "HIP 5.2", "")] == [
        "5.2", "6.1", "6.2", "10.1", None, None]


def test_debian_hipcc_says_5_2() -> None:
    """Debian's hipcc prints 'HIP version: 5.2.21153-0' (then clang's or nvcc's version, by HIP_PLATFORM)."""
    hipcc = require_tool("hipcc")
    assert detect_installed() == RocmTarget("5.2", "hipcc --version")
    assert detect_installed(hipcc=hipcc) == RocmTarget("5.2", f"{hipcc} --version")


def test_a_hipcc_is_asked_once_until_it_changes(tmp_path: Path) -> None:
    """Each `apply` in one process picks a release; the same compiler file answers once, a changed one again."""
    log = tmp_path / "asked"
    hipcc = tmp_path / "hipcc"
    hipcc.write_text(f'#!/bin/sh\necho asked >> "{log}"\necho "HIP version: 6.1.40091-a8dbc0c19"\n')
    hipcc.chmod(0o755)
    assert detect_installed(hipcc=hipcc) == detect_installed(hipcc=hipcc) == RocmTarget("6.1", f"{hipcc} --version")
    assert log.read_text() == "asked\n"
    hipcc.write_text(f'#!/bin/sh\necho asked >> "{log}"\necho "HIP version: 6.2.41133-dd7f95766 (new)"\n')
    assert detect_installed(hipcc=hipcc) == RocmTarget("6.2", f"{hipcc} --version")
    assert log.read_text() == "asked\nasked\n"


def test_hipconfig_when_hipcc_is_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hipconfig = require_tool("hipconfig")
    wrapper = _bare(tmp_path, monkeypatch) / "hipconfig"  # Debian's finds hipconfig.pl beside itself: no symlink
    wrapper.write_text(f'#!/bin/sh\nexec {hipconfig} "$@"\n')
    wrapper.chmod(0o755)
    assert detect_installed() == RocmTarget("5.2", "hipconfig --version")


def test_rocm_install_version_file(bare_machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rocm = tmp_path / "rocm-6.2.4"
    (rocm / ".info").mkdir(parents=True)
    (rocm / ".info" / "version").write_text("6.2.4-120\n")
    monkeypatch.setenv("ROCM_PATH", str(rocm))
    assert detect_installed() == RocmTarget("6.2", f"{rocm}/.info/version")
    (rocm / ".info" / "version").unlink()
    assert detect_installed() == RocmTarget("6.2", f"the directory name {rocm}")


def test_rocm_pytorch_read_without_importing_it(bare_machine: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    package = _torch_package(tmp_path / "site", "6.1.40091-a8dbc0c19")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert detect_installed() == RocmTarget("6.1", f"torch.version.hip in {package / 'version.py'}")
    assert "torch" not in sys.modules or not str(getattr(sys.modules["torch"], "__file__", "")).startswith(str(tmp_path))


def test_rocm_pytorch_of_another_interpreter(bare_machine: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """migrate in a virtualenv of its own, ROCm PyTorch in the user's: asked of that python, in a child process."""
    package = _torch_package(tmp_path / "user-site", "6.3.42131-fa1d09cbd")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "user-site"))
    found = detect_installed(python=sys.executable)
    assert found == RocmTarget("6.3", f"torch.version.hip in {package / 'version.py'}")


def test_a_cuda_pytorch_says_nothing(bare_machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _torch_package(tmp_path / "site", None)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert detect_installed() is None
    assert choose_rocm(None, None, None) == RocmTarget("", NOTHING_FOUND)
    assert choose_rocm(None, None, None).describe() == f"targets ROCm 10.1, the newest release migrate knows ({NOTHING_FOUND})"


def test_option_then_setting_then_installed() -> None:
    require_tool("hipcc")
    assert choose_rocm("6.2", "6.0", "/r/pyproject.toml").describe() == "targets ROCm 6.2 (--rocm)"
    assert choose_rocm(None, "6.0", "/r/pyproject.toml").describe() == (
        'targets ROCm 6.0 (rocm = "6.0" in pyproject.toml [tool.migrate])')
    assert choose_rocm(None, "6.0", "/r/.migrate.toml").describe() == 'targets ROCm 6.0 (rocm = "6.0" in .migrate.toml)'
    assert choose_rocm(None, None, None).describe() == "targets ROCm 5.2 (hipcc --version)"


def test_rocm_setting_is_checked(tmp_path: Path) -> None:
    for value, error in (('"6.2"', None), ("6.2", 'expected a ROCm release as a string, such as "6.2"'),
                         ('"six"', "'six' is not a ROCm release such as \"6.2\"")):
        (tmp_path / "pyproject.toml").write_text(f"[tool.migrate]\nrocm = {value}\n")
        if error is None:
            assert load_settings(tmp_path, {"no_cache": True}).rocm == "6.2"
            continue
        with pytest.raises(ConfigError) as raised:
            load_settings(tmp_path, {"no_cache": True})
        assert str(raised.value) == f"pyproject.toml: [tool.migrate] rocm: {error}"


# -- the commands --------------------------------------------------------------------------------------------------


def _translate(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, ["translate", *args, "--engine", "builtin"])
    assert result.exit_code == 0, result.output
    return result.stderr.splitlines()[0], result.stdout


def test_translate_targets_the_installed_rocm(tmp_path: Path) -> None:
    """Debian's hipcc is HIP 5.2: no *_sync warp builtins, so they are rewritten without a mask."""
    require_tool("hipcc")
    line, _ = _translate(str(WARP), "-o", str(tmp_path / "out.cu"))
    assert line == "engine: builtin; targets ROCm 5.2 (hipcc --version)"
    text = (tmp_path / "out.cu").read_text()
    assert "__shfl_down(0xffffffff" not in text and "v += __shfl_down(v, offset);" in text
    line, _ = _translate(str(WARP), "-o", str(tmp_path / "new.cu"), "--rocm", "6.2")
    assert line == "engine: builtin; targets ROCm 6.2 (--rocm)"
    assert "v += __shfl_down_sync(0xffffffffffffffffull, v, offset);" in (tmp_path / "new.cu").read_text()


def test_translate_follows_the_repository_setting(tmp_path: Path) -> None:
    shutil.copy(WARP, tmp_path / "warp.cu")
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\nrocm = "6.2"\n')
    line, _ = _translate(str(tmp_path), "--out-dir", str(tmp_path.parent / "out"))
    assert line == 'engine: builtin; targets ROCm 6.2 (rocm = "6.2" in pyproject.toml [tool.migrate])'
    assert "__shfl_down_sync(0xffffffffffffffffull" in (tmp_path.parent / "out" / "warp.cu").read_text()


def test_translate_without_a_toolchain_targets_the_newest(bare_machine: Path, tmp_path: Path) -> None:
    line, _ = _translate(str(WARP), "-o", str(tmp_path / "out.cu"))
    assert line == f"engine: builtin; targets ROCm 10.1, the newest release migrate knows ({NOTHING_FOUND})"


@pytest.mark.slow
def test_hipify_perl_is_not_said_to_target_a_release(tmp_path: Path) -> None:
    perl = os.environ.get("MIGRATE_HIPIFY_PERL") or require_tool("hipify-perl")
    result = CliRunner().invoke(cli, ["translate", str(WARP), "-o", str(tmp_path / "o.cu"), "--engine", "perl",
                                      "--hipify-perl", perl])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == f"engine: hipify-perl ({perl})"


@pytest.mark.slow
def test_apply_and_verify_use_the_installed_rocm(tmp_path: Path) -> None:
    require_tool("hipcc")
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(WARP, repo / "warp.cu")
    init_repo(repo)
    base = ["--engine", "builtin", "--strategy", "fork"]
    applied = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--sources-only", *base])
    assert applied.exit_code == 0, applied.output
    assert applied.stderr.splitlines()[0] == "engine: builtin; targets ROCm 5.2 (hipcc --version)"
    assert "+    v += __shfl_down(v, offset);" in applied.stdout
    pinned = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--sources-only", *base, "--rocm", "6.2"])
    assert "+    v += __shfl_down_sync(0xffffffffffffffffull, v, offset);" in pinned.stdout
    checked = CliRunner().invoke(cli, ["verify", str(repo), "--target", "gfx90a", *base])
    assert checked.exit_code == 0, checked.output
    assert checked.stderr.splitlines()[0] == "engine: builtin; targets ROCm 5.2 (hipcc --version)"
    assert checked.stdout.startswith("gfx90a: 1/1 unit(s) compile with hipcc (HIP 5.2")
    too_new = CliRunner().invoke(cli, ["verify", str(repo), "--target", "gfx90a", *base, "--rocm", "6.2"])
    assert too_new.exit_code == 1  # the 6.2 spelling (64-bit masks on *_sync) does not compile with HIP 5.2
    assert "targets ROCm 6.2 (--rocm)" in too_new.stderr


def test_the_compat_header_names_the_headers_of_the_target_release(tmp_path: Path) -> None:
    """The header/cmake/make ports include HIP headers in one compat header: ROCm 5.2 has no hip/hip_bf16.h."""
    from migrate.port.apply import plan_port
    from migrate.config import Settings
    from migrate.port.plan import PortOptions
    from migrate.port.translate import Engine, Options

    (tmp_path / "convert.cu").write_text("#include <cuda_bf16.h>\n__global__ void k(__nv_bfloat16 *x) {}\n"
                                         "int main() { cudaDeviceSynchronize(); return 0; }\n")

    def header(rocm: str) -> str:
        engine = Engine("builtin", options=Options(rocm=rocm))
        plan = plan_port(tmp_path, Settings(), PortOptions(engine, side_files=False, strategy="header"))
        return next(c.new.decode() for c in plan.changes if c.relpath == "cuda_hip_compat.h")

    assert "#include <hip/hip_bfloat16.h>\n" in header("5.2") and "hip_bf16.h" not in header("5.2")
    assert "#include <hip/hip_bf16.h>\n" in header("6.2")
