"""The validated rules kept as JSON (CACHE_DIR/rulesets/), with the knowledge files a check reads and the API map
made from its TSV, so that `migrate check` on a few files skips the YAML and the TSV."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from migrate import __version__, digests
from migrate.apimap import ApiEntry, entries_flat, remember_entries
from migrate.bounded import Refused
from migrate.cache.store import (
    FORMAT, atomic_write, check_directory, code_digest, dumps, load_json, private_dir, prune, remember_rules_digest,
    rules_digest, stable, tree_digest,
)
from migrate.config import Settings
from migrate.data import known, remember
from migrate.gcpause import paused
from migrate.model import Rule, Severity
from migrate.ruleset import Ruleset

_RULE_FIELDS = [f.name for f in dataclasses.fields(Rule)]
_SEVERITIES = tuple(Severity)
# The knowledge files `migrate check` reads (headers, risk weights, GPU targets), kept with the rules; the API map is
# kept as the entries made from its TSV.
_KNOWLEDGE = ("hip_headers.yaml", "risk.yaml", "gpu_archs.yaml")


def load_ruleset(settings: Settings, load: Callable[[], Ruleset]) -> Ruleset:
    """LOAD's validated ruleset, kept as JSON until a rule file, our code or the settings change.

    Reading and validating the YAML costs more than checking a few files, so `migrate check` keeps it."""
    if settings.cache_dir is None:
        return load()
    directory = Path(settings.cache_dir)
    check_directory(directory)
    path = directory / "rulesets" / f"{_ruleset_key(settings)}.json"
    with paused():  # the rules and the API map's entries: many objects, no cycles
        data = load_json(path)
        found = _rules_from(data)
    if found is not None:
        if isinstance(data.get("digest"), str):
            remember_rules_digest(found, data["digest"])
        remember(_knowledge_from(data))
        entries = _entries_from(data)
        if entries is not None:
            remember_entries(entries)
        return found
    ruleset = load()
    document = _rules_data(ruleset)
    if document is not None:
        with contextlib.suppress(OSError, Refused):
            private_dir(path.parent)
            atomic_write(path, document)
            prune(path.parent)
    return ruleset


def _ruleset_key(settings: Settings) -> str:
    digest = digests.sha256(f"{__version__}\0{sys.version}\0{code_digest()}\0".encode())
    digest.update(f"{stable(settings.disabled_rules)}\0{settings.severity_overrides!r}".encode())
    for directory in settings.extra_rule_dirs:
        digest.update(f"\0{directory}\0{tree_digest(Path(directory))}".encode())
    return digest.hexdigest()[:32]


def _rules_data(ruleset: Ruleset) -> str | None:
    """The ruleset as JSON, or None when a rule holds data JSON cannot give back unchanged."""
    rules = []
    for rule in ruleset.rules:
        fields = {name: getattr(rule, name) for name in _RULE_FIELDS}
        fields["severity"] = int(rule.severity)
        fields["by_wavefront"] = [[size, int(level)] for size, level in rule.by_wavefront]
        rules.append(fields)
    document = {"format": FORMAT, "rules": rules, "digest": rules_digest(ruleset), "knowledge": _knowledge(),
                "api_map": _entries()}
    try:
        text = dumps(document)
    except (TypeError, ValueError):
        return None
    back = _rules_from(json.loads(text))
    if back is None or back != ruleset or any(a.match != b.match for a, b in zip(back.rules, ruleset.rules)):
        return None
    return text if rules_digest(back) == document["digest"] else None


def _knowledge() -> dict[str, Any]:
    """The knowledge files a check reads, those JSON gives back unchanged; none when one cannot be read (the scan
    reports that where it reads the file)."""
    try:
        data = known(_KNOWLEDGE)
    except (OSError, ValueError):
        return {}
    return {name: value for name, value in data.items() if json.loads(json.dumps(value)) == value}


def _entries() -> list[str] | None:
    """The API map's entries, field after field; none when its TSV cannot be read (the scan reports that)."""
    try:
        return entries_flat()
    except (OSError, ValueError):
        return None


def _entries_from(data: dict[str, Any]) -> list[str] | None:
    """The API map's entries in a cached ruleset DATA, or None when absent or of the wrong shape."""
    flat = data.get("api_map")
    if not (isinstance(flat, list) and len(flat) % len(ApiEntry._fields) == 0):
        return None
    try:
        "".join(flat)  # a TypeError unless every field is a string: 8 times faster than testing each
    except TypeError:
        return None
    return flat


def _knowledge_from(data: dict[str, Any]) -> dict[str, Any]:
    """The knowledge files in a cached ruleset DATA, less any of the wrong shape."""
    found = data.get("knowledge")
    if not isinstance(found, dict):
        return {}
    return {name: value for name, value in found.items() if name in _KNOWLEDGE and isinstance(value, dict)}


def _rules_from(data: Any) -> Ruleset | None:
    """The Ruleset DATA describes, or None when any rule has the wrong shape."""
    if not (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("rules"), list)):
        return None
    rules = []
    for fields in data["rules"]:
        try:
            rules.append(_rule_from(fields))
        except (TypeError, ValueError, KeyError, IndexError):
            return None
    return Ruleset(tuple(rules))


def _rule_from(fields: Any) -> Rule:
    if not (isinstance(fields, dict) and set(fields) == set(_RULE_FIELDS)):
        raise ValueError("not a rule")
    text = ("id", "title", "category", "message", "source")
    if not (_strings([fields[k] for k in text]) and _strings(fields["languages"]) and _strings(fields["substitutions"])
            and isinstance(fields["match"], dict) and type(fields["per_file"]) is bool
            and type(fields["rocm_path"]) is bool
            and (fields["hip"] is None or type(fields["hip"]) is str)):
        raise ValueError("not a rule")
    effort = fields["effort"]
    if effort is not None and not (isinstance(effort, list) and len(effort) == 2 and _numbers(effort)):
        raise ValueError("not a rule")
    waves = tuple((int(size), _severity(level)) for size, level in fields["by_wavefront"])
    return Rule(
        id=fields["id"], title=fields["title"], category=fields["category"], languages=tuple(fields["languages"]),
        severity=_severity(fields["severity"]), message=fields["message"], hip=fields["hip"], match=fields["match"],
        substitutions=tuple(fields["substitutions"]), by_wavefront=waves, per_file=fields["per_file"],
        rocm_path=fields["rocm_path"], effort=tuple(effort) if effort is not None else None, source=fields["source"],
    )


def _severity(value: Any) -> Severity:
    if type(value) is not int or not 0 <= value < len(_SEVERITIES):
        raise ValueError("not a severity")
    return _SEVERITIES[value]


def _strings(values: list[Any]) -> bool:
    return all(type(value) is str for value in values)


def _numbers(values: list[Any]) -> bool:
    return all(type(value) in (int, float) for value in values)
