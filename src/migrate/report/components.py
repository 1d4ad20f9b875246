"""A component named for what it is (inference path, custom ops, build, tests, ...) with its folder; pure."""

from __future__ import annotations

import re

from migrate import finding_status, risk

ROOT = "repository root"

# By folder first: a test or an example is that, whatever CUDA it holds.
_BY_PATH = (
    (re.compile(r"(?:^|/)(?:tests?|testing|unittests?)(?:/|$)"), "tests"),
    (re.compile(r"(?:^|/)(?:examples?|samples?|demos?|tutorials?|notebooks?|recipes)(?:/|$)"), "examples"),
    (re.compile(r"(?:^|/)(?:benchmarks?|bench)(?:/|$)"), "benchmarks"),
    (re.compile(r"(?:^|/)(?:docs?)(?:/|$)"), "docs"),
    (re.compile(r"(?:^|/)(?:\.github|\.gitlab|\.circleci|\.?ci)(?:/|$)"), "CI"),
    (re.compile(r"(?:^|/)(?:docker|dockerfiles?|containers?)(?:/|$)"), "environment"),
)
_PYTHON_PATHS = (
    (re.compile(r"train|finetun|pretrain", re.IGNORECASE), "training path"),
    (re.compile(r"infer|serv(?:e|er|ing)|deploy|export|predict|runtime", re.IGNORECASE), "inference/deployment path"),
)
# Then by the costliest kind of work in it (risk.yaml's categories).
_BY_CATEGORY = {
    "tensorrt": "inference/deployment path",
    "custom-cuda-kernel": "custom ops/kernels", "inline-ptx": "custom ops/kernels",
    "warp-size-assumption": "custom ops/kernels", "unsupported-api": "custom ops/kernels",
    "triton-kernel": "custom ops/kernels",
    "cuda-driver-api": "custom ops/kernels", "cuda-library": "custom ops/kernels", "other": "custom ops/kernels",
    "cpp-extension-build": "build", "cuda-build-config": "build",
    "cuda-only-dependency": "environment", "cuda-index-url": "environment", "nvidia-docker": "environment",
    "nvidia-runtime-tool": "environment", "env-var": "environment", "torch-version-check": "environment",
}


def folder(name: str) -> str:
    """A component's folder as people read it: 'csrc/', or 'repository root' (never '.')."""
    return ROOT if name in (".", "") else f"{name}/"


def role(name: str, categories: tuple[str, ...]) -> str:
    """What a component is: tests, examples, ... by its folder, else by the costliest kind of work in it."""
    for pattern, found in _BY_PATH:
        if pattern.search(name):
            return found
    top = categories[0] if categories else "other"
    if top in _BY_CATEGORY:
        return _BY_CATEGORY[top]
    for pattern, found in _PYTHON_PATHS:
        if pattern.search(name):
            return found
    return "Python GPU code"


def title(component: risk.Component) -> str:
    """'custom ops/kernels (csrc/)': what the component is, and where."""
    return name_title(component.name, component.categories)


def name_title(name: str, categories: tuple[str, ...] = ()) -> str:
    """The title of a component known by name only (its costliest categories, when known, decide the role)."""
    return f"{role(name, categories)} ({folder(name)})"


def status(component: risk.Component, context: finding_status.Context) -> str:
    """Where a component stands: blocked, a CUDA-only add-on, partly ported, or to port."""
    if component.optional:
        return "CUDA-only add-on"
    if component.blocked:
        return "blocked"
    return "partly ported" if component.name in context.ported else "to port"
