"""Cargo.toml: a Rust package's dependencies, the features each enables, and the features its own features forward."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import PACKAGE, Item, ManifestDocument
from migrate.parse.pyproject import Locator, load_toml

_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
_TEST_ONLY = "dev-dependencies"  # what only tests and examples build: off the main path


@dataclass(frozen=True)
class _Dependency:
    key: str  # the name the manifest gives it (a rename's key)
    crate: str  # the crate it is (`package = "..."`, else the key), with - for _
    spec: Any
    test_only: bool
    declared: bool = False  # a [workspace.dependencies] entry: turns nothing on until a member inherits it

    @property
    def declared_optional(self) -> bool:
        return isinstance(self.spec, dict) and self.spec.get("optional") is True

    @property
    def features(self) -> tuple[str, ...]:
        found = self.spec.get("features") if isinstance(self.spec, dict) else None
        return tuple(f for f in found if isinstance(f, str)) if isinstance(found, list) else ()


def crate_name(name: str) -> str:
    """A crate's name as the rules spell it: crates.io treats - and _ as one, the rules write -."""
    return name.strip().lower().replace("_", "-")


def _dependencies(data: Mapping[str, Any]) -> Iterator[_Dependency]:
    """Every dependency table: [dependencies] and its dev/build kin, per target (`[target.'cfg(unix)'.dependencies]`),
    and [workspace.dependencies] (what members inherit with `workspace = true`)."""
    tables: list[tuple[str, Any]] = [(name, data.get(name)) for name in _TABLES]
    for target in (data.get("target") or {}).values():
        if isinstance(target, dict):
            tables.extend((name, target.get(name)) for name in _TABLES)
    workspace = data.get("workspace")
    if isinstance(workspace, dict):
        tables.append(("workspace", workspace.get("dependencies")))
    for name, table in tables:
        for key, spec in table.items() if isinstance(table, dict) else ():
            package = spec.get("package") if isinstance(spec, dict) else None
            crate = crate_name(package if isinstance(package, str) else key)
            yield _Dependency(key, crate, spec, test_only=name == _TEST_ONLY, declared=name == "workspace")


def _default_closure(features: Mapping[str, Any]) -> set[str]:
    """The features and optional dependencies the `default` feature turns on, followed through the feature table."""
    on: set[str] = set()
    pending = ["default"]
    while pending:
        name = pending.pop()
        if name in on:
            continue
        on.add(name)
        entries = features.get(name)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, str):
                continue
            crate = entry.split("/", 1)[0]
            if not crate.endswith("?"):  # `crate?/feature` turns the feature on only where the crate is on already
                pending.append(crate.removeprefix("dep:"))
    return on


def cargo_items(data: Mapping[str, Any], where: Locator) -> Iterator[Item]:
    """A package item per dependency (its features as args) and per forwarded feature (`candle-core/cuda` in a
    feature list: the crate, with that one feature); optional unless the default features reach it."""
    table = data.get("features")
    features: Mapping[str, Any] = table if isinstance(table, dict) else {}
    on = _default_closure(features)
    by_key: dict[str, str] = {}
    off: set[str] = set()  # the keys of the dependencies off the main path
    for dependency in _dependencies(data):
        by_key[dependency.key] = dependency.crate
        line, column = _key_place(where, dependency.key)
        optional = dependency.test_only or dependency.declared or (
            dependency.declared_optional and dependency.key not in on)
        if optional:
            off.add(dependency.key)
        yield Item(PACKAGE, dependency.crate, line, column, value=f"{dependency.key} {_spec_text(dependency.spec)}",
                   args=dependency.features, url=_url(dependency.spec), optional=optional)
    for feature, entries in features.items():
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, str) or "/" not in entry or entry.startswith("dep:"):
                continue
            key, forwarded = entry.split("/", 1)
            weak = key.endswith("?")  # `crate?/feature`: only where something else turns the crate on
            key = key.rstrip("?")
            line, column = where.find(entry)
            yield Item(PACKAGE, by_key.get(key, crate_name(key)), line, column, value=entry, args=(forwarded,),
                       optional=feature not in on or (weak and key in off))


def _spec_text(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict):
        return str(spec.get("version", ""))
    return ""


def _url(spec: Any) -> str:
    if not isinstance(spec, dict):
        return ""
    url = spec.get("git") or spec.get("path") or ""
    return url if isinstance(url, str) else ""


_TABLE_HEADER = re.compile(r"^\s*\[[^\]]*\.\s*[\"']?(?P<key>[\w.-]+)[\"']?\s*\]\s*(?:#.*)?$")


def _key_place(where: Locator, key: str) -> tuple[int, int]:
    """Where KEY is given: `key = ...` in a table, else its own `[dependencies.key]` table header."""
    line, column = where.find(key, key=True)
    if (line, column) != (1, 1) or _is_key_line(where, 1, key):
        return line, column
    for number, text in enumerate(where.lines, start=1):
        match = _TABLE_HEADER.match(text)
        if match and match.group("key") == key:
            return number, match.start("key") + 1
    return line, column


def _is_key_line(where: Locator, number: int, key: str) -> bool:
    return bool(where.lines) and where.lines[number - 1].lstrip().lstrip("\"'").startswith(key)


@register(FileKind.CARGO)
def parse_cargo(source: SourceFile, text: str) -> ManifestDocument:
    """Cargo.toml: dependencies (per target, dev, build, workspace) with their features, and forwarded features."""
    return ManifestDocument(source=source, text=text, manifest=list(cargo_items(load_toml(text), Locator(text))))
