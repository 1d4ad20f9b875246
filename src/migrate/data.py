"""The rules directory and its knowledge files (rules/data/*): where they are, each read once per process."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def rules_dir() -> Path:
    """The built-in rules: shipped inside the wheel, or beside src/ in a source checkout."""
    here = Path(__file__).resolve()
    packaged = here.parent / "rules"  # importlib.resources would find the same folder, and costs 5 ms to import
    return packaged if packaged.is_dir() else here.parents[2] / "rules"


def data_path(name: str) -> Path:
    """A knowledge file under rules/data/ (API map, substitutions, GPU targets, risk weights, port tables)."""
    return rules_dir() / "data" / name


def load_yaml(name: str) -> Any:
    """rules/data/NAME as data, parsed once and shared: callers build their own records from it, never change it."""
    if name not in _KNOWN:
        _KNOWN[name] = read_yaml(data_path(name))
    return _KNOWN[name]


def read_yaml(path: Path) -> Any:
    """The YAML document in PATH (OSError, UnicodeDecodeError or ValueError when it cannot be read)."""
    import yaml  # here, not at the top: `migrate check` reads its knowledge files from the ruleset cache

    try:
        # libyaml's loader when PyYAML has it: the knowledge files load several times faster.
        return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def table_rows(name: str) -> list[list[str]]:
    """The rows of the tab-separated file rules/data/NAME, its header first, its `#` comment lines left out (read once
    and shared: never change them)."""
    if name not in _KNOWN:
        import csv  # here: `migrate check` gets the tables from the ruleset cache

        with open(data_path(name), encoding="utf-8", newline="") as handle:
            _KNOWN[name] = list(csv.reader((line for line in handle if not line.startswith("#")), delimiter="\t"))
    return _KNOWN[name]  # type: ignore[no-any-return]


_KNOWN: dict[str, Any] = {}  # knowledge files' data by name, read once per process or handed over by a cache


def known(names: Iterable[str]) -> dict[str, Any]:
    """The data of the knowledge files NAMES (.yaml or .tsv), read now where not yet read."""
    return {name: table_rows(name) if name.endswith(".tsv") else load_yaml(name) for name in names}


def remember(data: Mapping[str, Any]) -> None:
    """Take DATA (knowledge file name -> its data, as `known` gave it) instead of reading those files again."""
    for name, value in data.items():
        _KNOWN.setdefault(name, value)
