"""Bazel builds of TensorFlow / XLA custom ops (issue 19, builds): BUILD files and .bzl macros that build GPU targets
through the CUDA toolchain only, with their exact findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.discover import classify
from migrate.model import FileKind

from conftest import FIXTURES, tree_findings

OPS = FIXTURES / "rules" / "manifests" / "bazel-ops"


def _fixture(*names: str) -> dict[str, str]:
    return {name: (OPS / name).read_text(encoding="utf-8") for name in names}


@pytest.mark.parametrize(
    ("relpath", "kind"),
    [("ops/BUILD", FileKind.BAZEL), ("BUILD.bazel", FileKind.BAZEL), ("tools/defs.bzl", FileKind.BAZEL),
     ("scripts/build", None), ("BUILD.md", FileKind.MARKDOWN)],
)
def test_bazel_files_are_classified_by_name(relpath: str, kind: FileKind | None) -> None:
    assert classify(relpath) is kind


def test_cuda_only_macros_and_build_file_are_one_finding_each(tmp_path: Path) -> None:
    """One finding per file at its first CUDA-only fact, the others as occurrences; nothing from the docstring or
    the commented-out select."""
    assert tree_findings(tmp_path, _fixture("ops/defs.bzl", "ops/BUILD")) == [
        ("ops/BUILD", 8, "bazel-cuda-build", "medium", ()),
        ("ops/defs.bzl", 7, "bazel-cuda-build", "medium", (7, 12, 13, 15, 21, 27)),
    ]


def test_a_build_file_with_the_rocm_side_or_no_cuda_is_quiet(tmp_path: Path) -> None:
    assert tree_findings(tmp_path, _fixture("ported/BUILD.bazel", "cpu/BUILD")) == []


def test_rules_cuda_targets_and_toolkit_library_imports(tmp_path: Path) -> None:
    """rules_cuda's load label and cuda_library target, and a repository rule that takes libcudart_static.a from the
    toolkit: one finding per file with the rest as occurrences; the docstring and the comment that name the library
    and a cc_library called cuda_log_reader stay quiet."""
    assert tree_findings(tmp_path, _fixture("rulescuda/BUILD", "toolkit/toolkit.bzl", "toolkit/BUILD")) == [
        ("rulescuda/BUILD", 3, "bazel-cuda-build", "medium", (3, 10)),
        ("toolkit/toolkit.bzl", 7, "bazel-cuda-build", "medium", ()),
    ]


@pytest.mark.parametrize(("relpath", "kind"), [(".bazelrc", FileKind.BAZEL), ("tools/cuda.bazelrc", FileKind.BAZEL),
                                               ("docs/bazelrc.md", FileKind.MARKDOWN)])
def test_bazelrc_files_are_bazel_files(relpath: str, kind: FileKind) -> None:
    assert classify(relpath) is kind


def test_a_bazelrc_that_configures_only_the_cuda_toolchain_is_one_finding(tmp_path: Path) -> None:
    """The crosstool, the nvcc define and the CUDA settings are occurrences; the host compiler path, the comments and
    the test options are not."""
    assert tree_findings(tmp_path, {".bazelrc": (OPS / "rc-cuda" / ".bazelrc").read_text(encoding="utf-8")}) == [
        (".bazelrc", 7, "bazel-cuda-build", "medium", (7, 8, 9, 10)),
    ]


def test_a_bazelrc_with_a_rocm_config_or_no_gpu_config_is_quiet(tmp_path: Path) -> None:
    files = {".bazelrc": (OPS / "rc-both" / ".bazelrc").read_text(encoding="utf-8"),
             "tools/ci.bazelrc": (OPS / "rc-cpu" / "tools.bazelrc").read_text(encoding="utf-8")}
    assert tree_findings(tmp_path, files) == []
