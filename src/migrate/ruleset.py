"""Load and validate rules/*.yaml once; a broken file is one error naming the file and the rule id."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migrate import digests, matchers
from migrate.bounded import Refused, read_bytes
from migrate.data import rules_dir
from migrate.errors import RuleFileError, interrupted
from migrate.model import CATEGORIES, FileKind, Rule, Severity

_REQUIRED = {"id": str, "title": str, "category": str, "languages": list, "severity": str, "message": str, "match": dict}
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "hip": (str, type(None)), "effort": list, "substitutions": list, "by_wavefront": dict, "per_file": bool,
    "rocm_path": bool,
}
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_LANGUAGES = frozenset(k.value for k in FileKind)
_LISTS_OF_STRINGS = ("languages", "substitutions")
MAX_RULE_FILE = 16 * 1024 * 1024


@dataclass(frozen=True)
class Ruleset:
    """The validated rules, with lookups by id and by file kind."""

    rules: tuple[Rule, ...]

    def by_id(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def for_kind(self, kind: FileKind) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if kind.value in r.languages)

    @property
    def version(self) -> str:
        """A digest of every rule, so caches can tell when the rules changed."""
        digest = digests.sha256()
        for rule in self.rules:
            digest.update(repr((rule.id, rule.severity, rule.match, rule.languages, rule.message)).encode())
        return digest.hexdigest()[:16]


def load_builtin() -> Ruleset:
    """The built-in rules (read once per process, or handed over by remember_builtin)."""
    if _BUILTIN is None:
        remember_builtin(load([rules_dir()]))
    assert _BUILTIN is not None
    return _BUILTIN


def remember_builtin(ruleset: Ruleset) -> None:
    """RULESET is the built-in rules (read back from the ruleset cache): load_builtin hands it over instead of
    reading and validating the rule files again (the assessment asks for them after every scan)."""
    global _BUILTIN
    _BUILTIN = _BUILTIN or ruleset


_BUILTIN: Ruleset | None = None


def load(directories: Iterable[Path], *, disabled: Iterable[str] = ()) -> Ruleset:
    """Read every *.yaml rule file in DIRECTORIES (in name order); ids must be unique across all."""
    off = set(disabled)
    seen: dict[str, str] = {}
    rules = []
    loaded = []
    for path in _rule_files(directories):
        for rule in _load_file(path):
            if rule.id in seen:
                raise RuleFileError(f"{path}: rule {rule.id}: duplicate id (first defined in {seen[rule.id]})")
            seen[rule.id] = str(path)
            loaded.append(rule)
            if rule.id not in off:
                rules.append(rule)
    _validate_together(loaded)
    return Ruleset(tuple(rules))


def _validate_together(rules: list[Rule]) -> None:
    """The checks a matcher makes of all its rules at once (each rule passed its own checks)."""
    by_matcher: dict[str, list[Rule]] = {}
    for rule in rules:
        by_matcher.setdefault(rule.match["matcher"], []).append(rule)
    for name, group in by_matcher.items():
        matcher = matchers.get(name)
        if matcher is None or matcher.validate_together is None:
            continue
        try:
            matcher.validate_together([rule.match for rule in group])
        except matchers.RuleInvalid as exc:
            if interrupted(exc):  # a Ctrl-C while tree-sitter compiled a query reads as a bad query
                raise KeyboardInterrupt from None
            rule = group[exc.index]
            raise RuleFileError(f"{rule.source}: rule {rule.id}: {exc}") from None


def _rule_files(directories: Iterable[Path]) -> Iterator[Path]:
    for directory in directories:
        if not directory.is_dir():
            raise RuleFileError(f"{directory}: rules directory not found")
        yield from sorted(directory.glob("*.yaml"))


def _load_file(path: Path) -> list[Rule]:
    import yaml  # here, not at the top: `migrate check` takes the rules from the ruleset cache

    try:
        text = read_bytes(path, limit=MAX_RULE_FILE).decode("utf-8")
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, Refused) as exc:
        raise RuleFileError(f"{path}: cannot read rules: {_first_line(exc)}") from None
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise RuleFileError(f"{path}: expected a mapping with a 'rules' list")
    return [_rule(path, index, raw) for index, raw in enumerate(document["rules"])]


def _rule(path: Path, index: int, raw: Any) -> Rule:
    rule_id = raw.get("id") if isinstance(raw, dict) else None
    where = f"{path}: rule {rule_id or f'#{index + 1}'}"
    try:
        return _validated(raw, str(path))
    except (ValueError, TypeError, re.error) as exc:
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise RuleFileError(f"{where}: {exc}") from None



def _validated(raw: Any, source: str) -> Rule:
    if not isinstance(raw, dict):
        raise ValueError("a rule must be a mapping")
    for key, kind in _REQUIRED.items():
        if key not in raw:
            raise ValueError(f"missing key '{key}'")
        if not isinstance(raw[key], kind):
            raise ValueError(f"'{key}' must be a {kind.__name__}")
    for key, kinds in _OPTIONAL.items():
        if key in raw and not isinstance(raw[key], kinds):
            raise ValueError(f"'{key}' has the wrong type")
    for key in _LISTS_OF_STRINGS:
        if not all(isinstance(item, str) for item in raw.get(key, ())):
            raise ValueError(f"'{key}' must be a list of strings")
    unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(sorted(unknown))}")
    if not _ID.match(raw["id"]):
        raise ValueError("id must be lower-case words joined by '-'")
    if raw["category"] not in CATEGORIES:
        raise ValueError(f"unknown category '{raw['category']}'")
    bad_languages = set(raw["languages"]) - _LANGUAGES
    if bad_languages:
        raise ValueError(f"unknown language(s): {', '.join(sorted(map(str, bad_languages)))}")
    _check_match(raw["match"])
    return Rule(
        id=raw["id"],
        title=raw["title"],
        category=raw["category"],
        languages=tuple(raw["languages"]),
        severity=Severity.parse(raw["severity"]),
        message=raw["message"].strip(),
        hip=raw.get("hip"),
        effort=_effort(raw.get("effort")),
        match=raw["match"],
        substitutions=tuple(raw.get("substitutions", ())),
        per_file=raw.get("per_file", False),
        rocm_path=raw.get("rocm_path", False),
        by_wavefront=tuple(sorted((int(k), Severity.parse(v)) for k, v in raw.get("by_wavefront", {}).items())),
        source=source,
    )


def _effort(raw: list[Any] | None) -> tuple[float, float] | None:
    """An [low, high] range of engineer-days per finding, overriding the risk model's default."""
    if raw is None:
        return None
    if len(raw) != 2 or not all(isinstance(v, (int, float)) for v in raw) or not 0 <= raw[0] <= raw[1]:
        raise ValueError("'effort' must be [low, high] engineer-days with 0 <= low <= high")
    return (float(raw[0]), float(raw[1]))


def _check_match(match: dict[str, Any]) -> None:
    name = match.get("matcher")
    if not isinstance(name, str):
        raise ValueError("'match' needs a 'matcher' name")
    matcher = matchers.get(name)
    if matcher is None:
        raise ValueError(f"unknown matcher '{name}' (known: {', '.join(matchers.names())})")
    if matcher.validate is not None:
        matcher.validate(match)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
