"""nvcc command-line words and what hipcc takes in their place (rules/data/hipcc_flags.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from migrate.data import load_yaml
from migrate.parse.manifest import is_arch_flag

_ARCH_WITH_VALUE = frozenset({"-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code"})


@dataclass(frozen=True)
class Word:
    """What one nvcc word becomes: the hipcc words in its place, whether the next word goes with it, and whether it
    names a GPU architecture."""

    words: tuple[str, ...]
    drop_next: bool = False
    arch: bool = False


@cache
def _data() -> dict[str, Any]:
    return dict(load_yaml("hipcc_flags.yaml"))


def path_map() -> dict[str, str]:
    """CUDA install paths and their ROCm counterparts, longest first as the data lists them."""
    return dict(_data()["paths"])


def hipcc_word(word: str) -> Word:
    """The hipcc form of one nvcc command-line WORD."""
    data = _data()
    if word in _ARCH_WITH_VALUE:
        return Word((), drop_next=True, arch=True)
    if word.endswith("/nvcc"):
        return Word(("hipcc",))
    if is_arch_flag(word):
        return Word((), arch=True)
    if word in data["words"]:
        return Word(tuple(w for w in [data["words"][word]] if w))
    option, equals, value = word.partition("=")
    if option in data["keep_value"]:
        return Word(tuple(v for v in value.split(",") if v) if equals else ())
    if option in data["with_value"]:
        return Word((), drop_next=not equals)
    return Word((word,))


def is_dropped_prefix(text: str) -> bool:
    """Whether a flag that starts with TEXT (the constant head of an f-string) is one hipcc never gets."""
    option = text.partition("=")[0]
    return option in _ARCH_WITH_VALUE or option in _data()["with_value"] or text.startswith(("-arch=sm_", "-gencode"))
