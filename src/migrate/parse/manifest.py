"""What manifest, build and container parsers produce: a flat list of located facts (items)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from migrate.lazyre import lazy_regex
from migrate.parse.document import Document

PACKAGE, INDEX, IMAGE, COMMAND, ENV, FACT, CMAKE = "package", "index", "image", "command", "env", "fact", "cmake"
READ = "env-read"  # a shell expansion of a variable ($NAME, ${NAME:-default})
# `-arch=sm_$(SM)`, `-arch=compute_${ARCH}`, `-arch=sm_$sm`: the number from a make/CMake/shell variable is still
# an NVIDIA target
NVCC_ARCH_FLAG = lazy_regex(
    r"^(?:-gencode(?:=.*)?|--generate-code(?:=.*)?|(?:-arch|--gpu-architecture)=(?:sm|compute)_(?:\w+|\$[({].*|\$\w+)|"
    r"-code=(?:sm|compute)_\w+.*|arch=compute_\w+,code=.*|(?:sm|compute)_\d+[a-z]?)$"
)
LOCATION = lazy_regex(r"^(?:(?:git|hg|svn|bzr)\+|https?://|file:|\.{1,2}/|/)")  # a requirement given as a place
_ARCHIVE_SUFFIX = lazy_regex(r"(?:\.git|\.zip|\.tar\.gz|\.tgz)$")
_WHEEL = lazy_regex(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")


@dataclass(frozen=True)
class Item:
    """One located fact of a manifest: a package, an index URL, an image, a command, an env var, ..."""

    kind: str
    name: str  # package (canonical) / URL / image / tool / variable / fact key / CMake command (lower case)
    line: int
    column: int
    value: str = ""  # the requirement text / option / image / variable value / fact value
    args: tuple[str, ...] = ()  # command or CMake arguments; a package's extras
    positions: tuple[tuple[int, int], ...] = ()  # (line, column) of each argument
    local: str = ""  # a package's local version label (cu121 in torch==2.3.1+cu121)
    url: str = ""  # a package's direct URL
    optional: bool = False  # a package of an optional group: an extra, a dev, test or docs group
    end_line: int = 0  # the last line of a fact that spans several (an Autoconf macro call); 0: its first line


def optional(items: Iterable[Item]) -> Iterator[Item]:
    """ITEMS as members of an optional group."""
    return (replace(item, optional=True) for item in items)


@dataclass
class ManifestDocument(Document):
    """A manifest, build or container file reduced to its items."""

    manifest: list[Item] = field(default_factory=list)


def items(doc: Document, kind: str) -> list[Item]:
    """DOC's items of one kind; empty for documents no manifest parser produced."""
    manifest = getattr(doc, "manifest", None)
    if not manifest:
        return []
    if "_items_by_kind" not in doc.__dict__:
        doc.__dict__["_items_by_kind"] = _group(manifest)
    return doc.__dict__["_items_by_kind"].get(kind, [])  # type: ignore[no-any-return]


def _group(manifest: list[Item]) -> dict[str, list[Item]]:
    grouped: dict[str, list[Item]] = {}
    for item in manifest:
        grouped.setdefault(item.kind, []).append(item)
    return grouped


class Positions:
    """Offset in a text -> 1-based (line, column)."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._first = first_line

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + self._first, offset - self._starts[index] + 1


def requirement_item(text: str, line: int, column: int, *, strict: bool = True) -> Item | None:
    """A pip requirement (name, specifier, extras, URL, wheel file) as a package item.

    strict: raise ValueError for text pip would reject; otherwise return None."""
    # packaging is imported where a requirement is read: the CMake and ROCm status code of every scan import this
    # module, and packaging's import costs more than a `check` of a few C++ files does.
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = text.strip()
    wheel = _wheel_file(text)
    if wheel:
        name, version = wheel.group("name"), wheel.group("version")
        return Item(PACKAGE, canonicalize_name(name), line, column, value=text, local=_local(version), url=text)
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        if strict:
            raise ValueError(str(exc).splitlines()[0]) from None
        return _templated_pin(text, line, column)
    pinned = [s.version for s in requirement.specifier if s.operator in ("==", "===")]
    # `name @ https://host/name-1.0+cu121-...whl`: the wheel file names the build
    url_wheel = _wheel_file(requirement.url) if requirement.url else None
    local = _local(pinned[0]) if pinned else _local(url_wheel.group("version")) if url_wheel else ""
    return Item(
        PACKAGE,
        canonicalize_name(requirement.name),
        line,
        column,
        value=text,
        args=tuple(sorted(requirement.extras)),
        local=local,
        url=requirement.url or "",
    )


def _wheel_file(url: str) -> re.Match[str] | None:
    """The name and version of the wheel file a URL or path ends in (`%2B` read as the `+` it encodes), or None."""
    return _WHEEL.match(url.rsplit("/", 1)[-1].split("#", 1)[0].replace("%2B", "+").replace("%2b", "+"))


_TEMPLATED_PIN = lazy_regex(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[\w,\s-]*\])?\s*===?\s*(?P<version>[^\s;,]*\$[^\s;,]*)")


def _templated_pin(text: str, line: int, column: int) -> Item | None:
    """A pin whose version a script fills in (`torch==${TORCH}+cu${CUDA//./}`): the name and the local label as
    written, variables and all; None for anything else pip would reject."""
    from packaging.utils import canonicalize_name

    match = _TEMPLATED_PIN.fullmatch(text)
    if match is None:
        return None
    version = match.group("version")
    local = version.split("+", 1)[1] if "+" in version else ""
    return Item(PACKAGE, canonicalize_name(match.group("name")), line, column, value=text, local=local)


def location_items(value: str, line: int, column: int) -> list[Item]:
    """A bare URL or path requirement: named by #egg=, else by the last path segment of a remote URL."""
    if "#egg=" in value:
        name = value.split("#egg=", 1)[1].split("&", 1)[0]
    elif "://" in value:
        last = value.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        name = _ARCHIVE_SUFFIX.sub("", last.split("@", 1)[0])
    else:
        return []  # a local path: nothing to say about its name
    item = requirement_item(name, line, column, strict=False)
    return [] if item is None else [Item(item.kind, item.name, line, column, value=value, url=value)]


def _local(version: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version.replace("*", "0")).local or ""
    except InvalidVersion:
        return version.split("+", 1)[1] if "+" in version else ""


def is_arch_flag(word: str) -> bool:
    """Whether WORD is an nvcc architecture flag or the value of one."""
    return bool(NVCC_ARCH_FLAG.match(word)) or ("arch=compute_" in word and "code=" in word)


def arch_flag_items(words: list[tuple[str, int, int]]) -> Iterator[Item]:
    """nvcc architecture flags (-gencode, arch=compute_XX, -arch=sm_XX) among located words."""
    for index, (word, line, column) in enumerate(words):
        if not is_arch_flag(word):
            continue
        following = words[index + 1][0] if index + 1 < len(words) else ""
        if word in ("-gencode", "--generate-code") and is_arch_flag(following):
            continue  # reported once, at its value (`arch=compute_${ARCH},code=...` included)
        yield Item(FACT, "nvcc-arch-flag", line, column, value=word)
