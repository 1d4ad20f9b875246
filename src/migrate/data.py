"""The rules directory and its knowledge files (rules/data/*): where they are, each read once per process."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

# libyaml's loader when PyYAML has it: the knowledge files load several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def rules_dir() -> Path:
    """The built-in rules: shipped inside the wheel, or beside src/ in a source checkout."""
    packaged = resources.files("migrate") / "rules"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "rules"


def data_path(name: str) -> Path:
    """A knowledge file under rules/data/ (API map, substitutions, GPU targets, risk weights, port tables)."""
    return rules_dir() / "data" / name


@cache
def load_yaml(name: str) -> Any:
    """rules/data/NAME as data, parsed once and shared: callers build their own records from it, never change it."""
    return read_yaml(data_path(name))


def read_yaml(path: Path) -> Any:
    """The YAML document in PATH (OSError, UnicodeDecodeError or yaml.YAMLError when it cannot be read)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def table_rows(name: str) -> Iterator[list[str]]:
    """The rows of the tab-separated file rules/data/NAME, its header first, its `#` comment lines left out."""
    with open(data_path(name), encoding="utf-8", newline="") as handle:
        yield from csv.reader((line for line in handle if not line.startswith("#")), delimiter="\t")
