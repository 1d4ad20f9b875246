"""pyproject.toml ([project], Poetry, uv, pixi), Pipfile and setup.cfg: dependencies and package indexes."""

from __future__ import annotations

import bisect
import configparser
import re
import sys
from collections.abc import Iterator
from typing import Any

from migrate.model import FileKind, SourceFile
from migrate.parse.document import ParseError, register
from migrate.parse.manifest import FACT, INDEX, PACKAGE, Item, ManifestDocument, optional, requirement_item

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class _Locator:
    """Finds the line and column of a value in the file text (TOML parsers keep no positions).

    Lines are indexed once by the first characters of what can start a value (after a quote) or a key, so each
    look-up reads only the lines that can hold it: a file of 10,000 dependencies is not read 10,000 times."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self._given: set[tuple[str, int, int]] = set()
        self._cursors: dict[tuple[str, bool], int] = {}
        self._places: dict[tuple[str, bool], list[tuple[int, int]]] = {}
        self._indexes: dict[bool, tuple[list[str], list[int]]] = {}

    def find(self, needle: str, *, key: bool = False) -> tuple[int, int]:
        places = self._places.get((needle, key))
        if places is None:
            places = self._places[(needle, key)] = self._search(needle, key)
        return self._next((needle, key), places)

    def _search(self, needle: str, key: bool) -> list[tuple[int, int]]:
        pattern = (
            re.compile(rf"^\s*[\"']?{re.escape(needle)}[\"']?\s*=") if key else re.compile(rf"[\"']{re.escape(needle)}")
        )
        found = []
        for number in self._candidates(needle, key):
            line = self.lines[number - 1]
            match = pattern.search(line)
            if match:
                found.append((number, (len(line) - len(line.lstrip()) if key else match.start() + 1) + (1 if key else 0)))
        return found

    def _candidates(self, needle: str, key: bool) -> list[int]:
        """The numbers of the lines that may hold NEEDLE (as a key, or after a quote), in order."""
        if key not in self._indexes:
            self._indexes[key] = self._index(key)
        starts, numbers = self._indexes[key]
        prefix = needle[:_PREFIX]
        first = last = bisect.bisect_left(starts, prefix)
        while last < len(starts) and starts[last].startswith(prefix):
            last += 1
        return sorted(set(numbers[first:last]))

    def _index(self, key: bool) -> tuple[list[str], list[int]]:
        """The first characters of every key (KEY) or of the text after every quote, sorted, with their lines."""
        pairs: list[tuple[str, int]] = []
        for number, line in enumerate(self.lines, start=1):
            stripped = line.lstrip()
            if stripped.startswith("#"):
                continue
            if key:
                pairs.append((stripped[:_PREFIX], number))
                if stripped[:1] in ("'", '"'):
                    pairs.append((stripped[1 : _PREFIX + 1], number))
            else:
                pairs.extend((line[m.end() : m.end() + _PREFIX], number) for m in _QUOTE.finditer(line))
        pairs.sort()
        return [start for start, _ in pairs], [number for _, number in pairs]

    def _next(self, wanted: tuple[str, bool], found: list[tuple[int, int]]) -> tuple[int, int]:
        """The first place of the needle not handed out yet: the same requirement in two extras sits on two lines."""
        needle = wanted[0]
        cursor = self._cursors.get(wanted, 0)  # the places before it are all handed out
        while cursor < len(found) and (needle, *found[cursor]) in self._given:
            cursor += 1
        self._cursors[wanted] = cursor
        if cursor < len(found):
            self._given.add((needle, *found[cursor]))
            return found[cursor]
        return found[0] if found else (1, 1)


Locator = _Locator  # the Cargo parser finds its values the same way

_PREFIX = 24  # characters of a value that index the lines
_QUOTE = re.compile(r"[\"']")


def load_toml(text: str) -> dict[str, Any]:
    """TEXT as TOML; ParseError when it is not."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"invalid TOML: {exc}") from None


def _requirements(values: Any, where: _Locator) -> Iterator[Item]:
    for value in values if isinstance(values, list) else []:
        if isinstance(value, str):
            item = requirement_item(value, *where.find(value), strict=False)
            if item is not None:
                yield item


def _table_dependencies(table: Any, where: _Locator) -> Iterator[Item]:
    """Poetry / Pipfile / pixi style {name = spec} tables."""
    for name, spec in (table or {}).items() if isinstance(table, dict) else []:
        if name.lower() == "python":
            continue
        line, column = where.find(name, key=True)
        text = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
        url = spec.get("url", "") or spec.get("git", "") if isinstance(spec, dict) else ""
        item = requirement_item(name, line, column, strict=False)
        if item is not None:
            version = re.sub(r"[^\w.+!*]", "", text.split(",")[0]) if text and text != "*" else ""
            local = version.split("+", 1)[1] if "+" in version else ""
            yield Item(PACKAGE, item.name, line, column, value=f"{name} {text}".strip(), local=local, url=url)


def _indexes(entries: Any, where: _Locator, option: str) -> Iterator[Item]:
    for entry in entries if isinstance(entries, list) else []:
        url = entry.get("url") if isinstance(entry, dict) else None
        if isinstance(url, str):
            yield Item(INDEX, url, *where.find(url), value=option)


def pyproject_items(data: dict[str, Any], where: _Locator) -> Iterator[Item]:
    project = data.get("project", {})
    yield from _requirements(project.get("dependencies"), where)
    for extra in (project.get("optional-dependencies") or {}).values():
        yield from optional(_requirements(extra, where))
    for group in (data.get("dependency-groups") or {}).values():
        yield from optional(_requirements(group, where))
    yield from _requirements(data.get("build-system", {}).get("requires"), where)
    tool = data.get("tool", {})
    yield from _poetry(tool.get("poetry") or {}, where)
    yield from _uv(tool.get("uv") or {}, where)
    yield from _pixi(tool.get("pixi") or {}, where)
    yield from _scikit_build(tool.get("scikit-build") or {}, where)


_CUDA_DEFINE = re.compile(r"^(?:-D)?(CMAKE_CUDA_\w+|CUDA_ARCHITECTURES|\w*_CUDA(?:_\w+)?|CUDA_\w+)(?::\w+)?(?:=(.*))?$")


def _scikit_build(table: dict[str, Any], where: _Locator) -> Iterator[Item]:
    """scikit-build-core's CMake settings that configure the CUDA build (cmake.define.CMAKE_CUDA_ARCHITECTURES,
    cmake.args = ["-DUSE_CUDA=ON"]): the CMake project's CUDA choices, made in pyproject.toml."""
    cmake = table.get("cmake") if isinstance(table, dict) else None
    if not isinstance(cmake, dict):
        return
    defines = cmake.get("define")
    for name, value in (defines.items() if isinstance(defines, dict) else ()):
        if _CUDA_DEFINE.match(name):
            place = where.find(f"cmake.define.{name}", key=True)
            if place == (1, 1):
                place = where.find(name, key=True)
            yield Item(FACT, "cmake-cuda-define", *place, value=f"{name}={value}")
    args = cmake.get("args")
    for arg in args if isinstance(args, list) else ():
        if isinstance(arg, str) and arg.startswith("-D") and _CUDA_DEFINE.match(arg):
            yield Item(FACT, "cmake-cuda-define", *where.find(arg), value=arg[2:])


def _poetry(poetry: dict[str, Any], where: _Locator) -> Iterator[Item]:
    yield from _table_dependencies(poetry.get("dependencies"), where)
    yield from optional(_table_dependencies(poetry.get("dev-dependencies"), where))
    for group in (poetry.get("group") or {}).values():
        yield from optional(_table_dependencies(group.get("dependencies") if isinstance(group, dict) else None, where))
    yield from _indexes(poetry.get("source"), where, "poetry-source")


def _uv(uv: dict[str, Any], where: _Locator) -> Iterator[Item]:
    yield from _indexes(uv.get("index"), where, "uv-index")
    for key in ("index-url", "extra-index-url", "find-links"):
        values = uv.get(key)
        for url in [values] if isinstance(values, str) else values or []:
            yield Item(INDEX, url, *where.find(url), value=f"uv-{key}")
    yield from _requirements(uv.get("dev-dependencies"), where)


def _pixi(pixi: dict[str, Any], where: _Locator) -> Iterator[Item]:
    for section in [pixi, *(pixi.get("feature") or {}).values()]:
        if not isinstance(section, dict):
            continue
        for channel in section.get("channels") or []:
            if isinstance(channel, str):
                yield Item(INDEX, channel, *where.find(channel), value="conda-channel")
        for name, spec in (section.get("dependencies") or {}).items():
            yield Item(PACKAGE, name.lower(), *where.find(name, key=True), value=f"{name} {spec}", args=("conda",))
        yield from _table_dependencies(section.get("pypi-dependencies"), where)
        cuda = (section.get("system-requirements") or {}).get("cuda")
        if cuda is not None:
            yield Item(FACT, "pixi-cuda-requirement", *where.find("cuda", key=True), value=str(cuda))


@register(FileKind.PYPROJECT)
def parse_pyproject(source: SourceFile, text: str) -> ManifestDocument:
    """pyproject.toml: PEP 621 dependencies, Poetry, uv and pixi tables, build requirements, indexes."""
    where = _Locator(text)
    return ManifestDocument(source=source, text=text, manifest=list(pyproject_items(load_toml(text), where)))


@register(FileKind.PIPFILE)
def parse_pipfile(source: SourceFile, text: str) -> ManifestDocument:
    """Pipfile: [packages], [dev-packages] and [[source]] URLs."""
    data, where = load_toml(text), _Locator(text)
    found = [*_indexes(data.get("source"), where, "pipfile-source")]
    for section in ("packages", "dev-packages"):
        found.extend(_table_dependencies(data.get(section), where))
    return ManifestDocument(source=source, text=text, manifest=found)


@register(FileKind.SETUP_CFG)
def parse_setup_cfg(source: SourceFile, text: str) -> ManifestDocument:
    """setup.cfg: [options] install_requires / setup_requires and [options.extras_require]."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ParseError(f"invalid setup.cfg: {str(exc).splitlines()[0]}") from None
    where = _Locator(text)
    lines = _LineLocator(where)
    required = list(_requirements(_cfg_values(parser, "options", ("install_requires", "setup_requires")), lines))
    extras = list(optional(_requirements(_cfg_values(parser, "options.extras_require", None), lines)))
    return ManifestDocument(source=source, text=text, manifest=required + extras)


def _cfg_values(parser: configparser.ConfigParser, section: str, keys: tuple[str, ...] | None) -> list[str]:
    """The requirement lines of a setup.cfg section (of KEYS, or every key)."""
    values: list[str] = []
    if parser.has_section(section):
        for key, value in parser.items(section):
            if keys is None or key in keys:
                values.extend(v.strip() for v in value.splitlines() if v.strip() and not v.strip().startswith("#"))
    return values


class _LineLocator(_Locator):
    """setup.cfg values are unquoted: find them as the text of a line."""

    def __init__(self, where: _Locator) -> None:
        super().__init__("")
        self.lines = where.lines
        self._by_text: dict[str, list[int]] = {}
        for number, line in enumerate(self.lines, start=1):
            for text in {line.strip(), line.split("=", 1)[-1].strip()}:
                self._by_text.setdefault(text, []).append(number)

    def _search(self, needle: str, key: bool) -> list[tuple[int, int]]:
        return [(number, self.lines[number - 1].index(needle) + 1) for number in sorted(self._by_text.get(needle, []))]
