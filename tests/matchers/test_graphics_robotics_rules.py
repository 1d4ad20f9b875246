"""Rules met in 3-D vision, graphics and robotics code: GPU simulators, rasteriser contexts, 3-D libraries,
torch's gencode flags, CUDA library locators, CUDA+OpenGL images, CUDA find-links pages and FindCUDA's GPU probe.
Each on a tiny module: the exact findings, and the look-alikes that stay quiet."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.errors import RuleFileError
from migrate.ruleset import load
from migrate.scan import scan

RULES = {
    "python-isaac-simulator", "isaac-simulator-dependency", "python-neural-graphics-cuda", "setup-torch-gencode-flags",
    "python-torch-gencode-flags", "python-cuda-bindings", "python-kaolin", "kaolin-dependency",
    "nvidia-cuda-base-image", "pytorch-cuda-index", "cmake-legacy-cuda-macros", "python-nvidia-warp",
    "python-cuda-arch-string", "python-warp-native-snippet", "python-taichi-warp-intrinsics",
    "python-madrona-batch-renderer", "madrona-renderer-dependency", "python-cuda-graphics-interop",
}


def findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, str]]:
    """(path, rule, line, severity) of the findings of the rules under test, guarded ones included."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, Settings(jobs=1))
    assert not result.skipped
    every = (*result.findings, *result.guarded_findings)
    return sorted((f.path, f.rule, f.line, f.severity.label) for f in every if f.rule in RULES)


def test_a_gpu_simulator_import_is_a_blocker_and_its_package_high(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "envs/task.py": """
            import gym
            from isaacgym import gymapi, gymtorch
            sim = gymapi.acquire_gym()
            states = gymtorch.wrap_tensor(sim)
            """,
        "envs/lab_cfg.py": "from isaaclab.assets import ArticulationCfg\n",
        "envs/optional.py": "try:\n    import isaacgym\nexcept ImportError:\n    isaacgym = None\n",
        "envs/local.py": "from isaacgym_helpers import grid\nimport gymnasium\n",
        "setup.py": "from setuptools import setup\nsetup(name='walk', install_requires=['isaacgym', 'gymnasium'])\n",
    })
    assert got == [
        ("envs/lab_cfg.py", "python-isaac-simulator", 1, "high"),
        ("envs/optional.py", "python-isaac-simulator", 2, "low"),
        ("envs/task.py", "python-isaac-simulator", 2, "high"),
        ("setup.py", "isaac-simulator-dependency", 2, "high"),
    ]


def test_the_rasteriser_context_is_found_through_an_alias_a_from_import_and_a_star_import(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "render.py": """
            import nvdiffrast.torch as dr
            from nvdiffrast.torch import RasterizeGLContext
            cuda_ctx = dr.RasterizeCudaContext(device=0)
            gl_ctx = RasterizeGLContext()
            out = dr.rasterize(cuda_ctx, 1, 2, resolution=[8, 8])
            """,
        "track.py": "from render import *\nctx = dr.RasterizeCudaContext()\n",
        "own.py": ("class RasterizeCudaContext:\n    pass\n\n\n"
                   "ctx = RasterizeCudaContext()\nname = 'dr.RasterizeCudaContext'\n"),
    })
    assert got == [
        ("render.py", "python-neural-graphics-cuda", 1, "high"),
        ("render.py", "python-neural-graphics-cuda", 2, "high"),
        ("render.py", "python-neural-graphics-cuda", 3, "high"),
        ("render.py", "python-neural-graphics-cuda", 4, "high"),
        ("track.py", "python-neural-graphics-cuda", 2, "high"),
    ]


def test_gencode_flags_stop_a_setup_py_and_a_script_unless_skipped_on_rocm(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "ext/setup.py": "from torch import cuda\nflags = cuda.get_gencode_flags().split()\n",
        "tools/env_report.py": """
            import torch
            report = {"gencode": torch.cuda.get_gencode_flags(), "archs": torch.cuda.get_arch_list()}
            def flags():
                if torch.version.hip:
                    return []
                return torch.cuda.get_gencode_flags().split()
            """,
    })
    assert got == [
        ("ext/setup.py", "setup-torch-gencode-flags", 2, "high"),
        ("tools/env_report.py", "python-torch-gencode-flags", 2, "medium"),
        ("tools/env_report.py", "python-torch-gencode-flags", 6, "info"),
    ]


def test_cuda_pathfinder_and_kaolin_are_cuda_only_imports(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "jit.py": "from cuda import pathfinder\ninclude = pathfinder.find_nvidia_header_directory('nvrtc')\n",
        "mesh.py": "import kaolin as kal\npts = kal.ops.spc.quantize_points(None, 3)\n",
        "lazy.py": ("def octree(p):\n    try:\n        import kaolin\n    except ImportError:\n"
                    "        return None\n    return kaolin\n"),
        "names.py": "from pathfinder_utils import search\nfrom kaolin_style import loss\n",
        "requirements.txt": "kaolin==0.15.0\nkaolin-docs-helper==0.1\n",
    })
    assert got == [
        ("jit.py", "python-cuda-bindings", 1, "medium"),
        ("lazy.py", "python-kaolin", 3, "low"),
        ("mesh.py", "python-kaolin", 1, "high"),
        ("requirements.txt", "kaolin-dependency", 1, "high"),
    ]


def test_cudagl_images_cuda_find_links_pages_and_the_findcuda_gpu_probe(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "docker/Dockerfile": "FROM nvidia/cudagl:11.3.0-devel-ubuntu20.04\nFROM nvidia/opengl:1.2-glvnd-runtime\n",
        "requirements.txt": (
            "-f https://example.org/wheels/py39_cu118_pyt200/download.html\n"
            "-f https://example.org/torch-2.0.0_cu118.html\n"
            "-f https://example.org/torch-2.0.0_cpu.html\n"
            "--find-links https://example.org/my_custom_build/\n"
        ),
        "viewer/CMakeLists.txt": ("project(viewer CXX)\nCUDA_DETECT_INSTALLED_GPUS(CCS)\n"
                                  "message(STATUS \"CUDA_DETECT_INSTALLED_GPUS\")\n"),
    })
    assert got == [
        ("docker/Dockerfile", "nvidia-cuda-base-image", 1, "medium"),
        ("requirements.txt", "pytorch-cuda-index", 1, "medium"),
        ("requirements.txt", "pytorch-cuda-index", 2, "medium"),
        ("viewer/CMakeLists.txt", "cmake-legacy-cuda-macros", 2, "medium"),
    ]


def test_a_module_under_warp_is_nvidia_warp_but_a_bare_warp_import_is_not(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "physics.py": "import warp as wp\nimport warp.sparse as wps\nfrom warp.fem.linalg import inverse_qr\n",
        "images.py": "import warp\nfrom warp import affine\n",
        "warp.py": "def affine(image):\n    return image\n",
    })
    assert [(path, line, severity) for path, rule, line, severity in got if rule == "python-nvidia-warp"] == [
        ("physics.py", 2, "high"),
        ("physics.py", 3, "high"),
    ]


def test_warp_kernels_reached_through_a_star_import_of_the_projects_helpers(tmp_path: Path) -> None:
    """`wp` from a project module's star import is Warp's where the file binds no `wp` itself (each @wp.kernel a
    finding, a nested one too); with its own `import ... as wp`, or no star import, @wp.kernel is not read as Warp."""
    got = findings(tmp_path, {
        "sim/helpers.py": "import numpy as np\n",
        "sim/solver.py": """
            from helpers import *

            @wp.kernel
            def step(x: wp.array(dtype=float)):
                pass

            class Solver:
                def run(self):
                    @wp.kernel
                    def inner(x: wp.array(dtype=float)):
                        pass
            """,
        "imgs/blend.py": "import weightpaint as wp\nfrom warp_utils import *\n\n@wp.kernel\ndef blend(a):\n    return a\n",
        "imgs/plain.py": "@wp.kernel\ndef blend(a):\n    return a\n",
    })
    assert [(path, line, severity) for path, rule, line, severity in got if rule == "python-nvidia-warp"] == [
        ("sim/solver.py", 3, "high"),
        ("sim/solver.py", 9, "high"),
    ]


def test_an_architecture_name_formatted_in_an_f_string_from_the_capability(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "jit.py": """
            def options(major, minor, device, strength, digest):
                flags = [f"--gpu-architecture=compute_{major}{minor}",
                         f"sm_{device.arch}"]
                names = [f"sm_{strength}", f"SM_{strength}", f"sm_{digest[:8]}", "sm_"]
                return flags, names
            """,
    })
    assert got == [("jit.py", "python-cuda-arch-string", 2, "medium"),
                   ("jit.py", "python-cuda-arch-string", 3, "medium")]


def test_a_formatted_test_with_a_bad_regex_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(
        "rules:\n  - id: my-rule\n    title: t\n    category: other\n    languages: [python]\n"
        "    severity: low\n    message: m\n"
        "    match: {matcher: python, needles: [x], strings: [{regex: x, formatted: '('}]}\n"
    )
    with pytest.raises(RuleFileError, match="r\\.yaml: rule my-rule: .*missing \\)"):
        load([tmp_path])


def test_warp_native_cuda_snippets_and_graph_capture(tmp_path: Path) -> None:
    """@wp.func_native is CUDA C++ compiled into Warp's kernels (high, its own rule); a CUDA graph captured around
    Warp launches and Warp's JAX FFI bridge are Warp on the GPU; the same names from another module are not."""
    got = findings(tmp_path, {
        "sim/reduce.py": """
            import warp as wp
            from warp.jax_experimental import ffi

            @wp.func_native(snippet="__syncthreads();")
            def barrier(): ...

            def run(step):
                with wp.ScopedCapture() as cap:
                    step()
                wp.capture_launch(cap.graph)
            """,
        "ui/shots.py": """
            import screenshots as wp

            @wp.func_native("blit")
            def blit(): ...

            with wp.ScopedCapture() as cap:
                pass
            """,
    })
    assert got == [
        ("sim/reduce.py", "python-nvidia-warp", 2, "high"),
        ("sim/reduce.py", "python-nvidia-warp", 8, "high"),
        ("sim/reduce.py", "python-nvidia-warp", 10, "high"),
        ("sim/reduce.py", "python-warp-native-snippet", 4, "high"),
    ]


def test_taichi_warp_shuffles_are_high_unless_kept_to_the_cuda_backend(tmp_path: Path) -> None:
    """ti.simt.warp / qd.simt.warp calls: high in an open kernel, low inside a branch only the CUDA backend takes
    (`if ti.static(arch == ti.cuda)`, `if qd.static(ENABLE_WARP_REDUCTION)`); block-shared arrays are not warp code."""
    got = findings(tmp_path, {
        "solver.py": """
            import quadrants as qd
            import taichi as ti

            def build(arch, ENABLE_WARP_REDUCTION):
                @ti.kernel
                def k(x: ti.types.ndarray()):
                    for i in range(32):
                        v = ti.simt.warp.shfl_down_i32(ti.u32(0xFFFFFFFF), x[i], 1)
                        if ti.static(arch == ti.cuda):
                            v = ti.simt.warp.shfl_xor_i32(ti.u32(0xFFFFFFFF), v, 1)
                        if qd.static(ENABLE_WARP_REDUCTION):
                            qd.simt.warp.sync(qd.u32(0xFFFFFFFF))
                        s = ti.simt.block.SharedArray((32,), ti.f32)
                return k
            """,
    })
    assert got == [
        ("solver.py", "python-taichi-warp-intrinsics", 8, "high"),
        ("solver.py", "python-taichi-warp-intrinsics", 10, "low"),
        ("solver.py", "python-taichi-warp-intrinsics", 12, "low"),
    ]


def test_madrona_batch_renderer_is_medium_and_low_behind_a_fallback(tmp_path: Path) -> None:
    got = findings(tmp_path, {
        "envs/vision.py": "from madrona_mjx.renderer import BatchRenderer\n",
        "envs/optional.py": "try:\n    import gs_madrona\nexcept ImportError:\n    gs_madrona = None\n",
        "requirements.txt": "mujoco-mjx\ngs-madrona==0.0.7\n",
    })
    assert got == [
        ("envs/optional.py", "python-madrona-batch-renderer", 2, "low"),
        ("envs/vision.py", "python-madrona-batch-renderer", 1, "medium"),
        ("requirements.txt", "madrona-renderer-dependency", 2, "medium"),
    ]


GL_VIEWER = """
    from cuda import cudart as cu


    class TextureSink:
        def __init__(self, texture_id, target):
            err, self.resource = cu.cudaGraphicsGLRegisterImage(
                texture_id, target, cu.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsWriteDiscard)
            if err != cu.cudaError_t.cudaSuccess:
                raise RuntimeError("cudaGraphicsGLRegisterImage failed")

        def upload(self, frame):
            (err,) = cu.cudaGraphicsMapResources(1, self.resource, cu.cudaStreamLegacy)
            err, array = cu.cudaGraphicsSubResourceGetMappedArray(self.resource, 0, 0)
            # cudaGraphicsUnmapResources comes after the copy
            return array


    def register_gl_texture(texture_id):
        return TextureSink(texture_id, 0)
"""


def test_cuda_graphics_interop_from_python_is_one_finding_per_file(tmp_path: Path) -> None:
    """The register, map and mapped-array calls through cuda-python; not the error message or comment that name
    them, nor the project's own function that registers a texture."""
    (tmp_path / "viewer.py").write_text(textwrap.dedent(GL_VIEWER).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, Settings(jobs=1))
    found = [f for f in result.findings if f.rule == "python-cuda-graphics-interop"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [
        (6, "medium", [6, 12, 13])]
