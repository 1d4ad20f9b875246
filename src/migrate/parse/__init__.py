"""Read a discovered file and parse it with the parser registered for its kind; failures become Skipped."""

from __future__ import annotations

import importlib

from migrate.model import FileKind, Skipped, SourceFile
from migrate.parse.document import Document, Parser, ParseError, parser_for, read_text

__all__ = ["PARSER_MODULES", "Document", "ParseError", "parse", "read_text"]

# The module of each kind's parser. A parser registers itself as its module is imported, and that happens when a file
# of its kind is first parsed: a scan of CUDA files never imports the Python or manifest parsers and their libraries.
PARSER_MODULES = {
    FileKind.CUDA: "cuda", FileKind.CPP: "cuda", FileKind.C: "cuda", FileKind.PYTHON: "python",
    FileKind.CMAKE: "cmake", FileKind.DOCKERFILE: "docker", FileKind.GITMODULES: "gitmodules",
    FileKind.INFER_CONFIG: "inferconfig", FileKind.MAKEFILE: "makefile", FileKind.MARKDOWN: "markdown",
    FileKind.PYPROJECT: "pyproject", FileKind.PIPFILE: "pyproject", FileKind.SETUP_CFG: "pyproject",
    FileKind.REQUIREMENTS: "requirements", FileKind.SETUP_PY: "setup_py", FileKind.SHELL: "shell",
    FileKind.CONDA: "yamlfiles", FileKind.COMPOSE: "yamlfiles", FileKind.CI_WORKFLOW: "yamlfiles",
    FileKind.KUBERNETES: "yamlfiles", FileKind.YAML: "yamlfiles", FileKind.COG: "yamlfiles",
    FileKind.CARGO: "cargo", FileKind.RUST_BUILD: "rust", FileKind.MSBUILD: "msbuild",
    FileKind.MATLAB: "matlab", FileKind.BAZEL: "bazel", FileKind.GO: "golang",
    FileKind.ROS_PACKAGE: "rospackage", FileKind.JVM_BUILD: "jvm_build",
    FileKind.FORTRAN: "fortran", FileKind.CYTHON: "cython", FileKind.SASS: "sass",
    FileKind.JULIA: "julia", FileKind.JULIA_PROJECT: "julia", FileKind.RUST: "rust_device",
    FileKind.DEVCONTAINER: "devcontainer", FileKind.AUTOCONF: "autoconf",
}


def parse(source: SourceFile, text: str | None = None) -> Document | Skipped:
    """Parse one file with the parser registered for its kind."""
    try:
        if text is None:
            text = read_text(source)
        return _parser(source.kind)(source, text)
    except ParseError as exc:
        return Skipped(source.relpath, str(exc))
    except (RecursionError, MemoryError):
        return Skipped(source.relpath, "too deeply nested to parse")


def _parser(kind: FileKind) -> Parser:
    module = PARSER_MODULES.get(kind)
    if module is not None:
        importlib.import_module(f"{__name__}.{module}")
    return parser_for(kind)
