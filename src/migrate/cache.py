"""Per-file scan results, keyed by content hash, rules, settings and tool version, kept between runs.

Layout: CACHE_DIR/results/<namespace>/<shard>.json, the namespace a digest of the repository path, the tool version,
our code and rule files, every rule (a superset of Ruleset.version) and the settings that change one file's
findings; CACHE_DIR/rulesets/*.json keeps the validated rules for fast start-up.

The cache may sit in a shared place (`--cache-dir`), so nothing in it is trusted: it holds plain JSON, every
entry is validated field by field when read (anything else is a miss), a cache directory that is not the
user's own or that others may write is refused, and a file in it that is not the user's own is ignored."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import operator
import os
import shutil
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from migrate import __version__
from migrate.bounded import Refused, check_private, read_bytes
from migrate.config import Settings
from migrate.errors import ConfigError
from migrate.gcpause import paused
from migrate.model import Evidence, FileResult, Finding, Occurrence, Rule, Severity, Skipped, SourceFile
from migrate.ruleset import Ruleset, rules_dir

FORMAT = 5
_MAX_FILE = 256 * 1024 * 1024  # a shard or ruleset file larger than this is not one of ours
_SHARDS = 256  # a store is split by path hash, so checking a few files reads a few small shards
_KEEP_STORES = 32  # namespaces (repository x rules x settings x version) kept; older ones are removed
# Settings that decide which files are scanned or how a run goes, but not what one file yields.
_NOT_PER_FILE = frozenset(
    {"jobs", "include", "exclude", "max_file_size", "fail_on", "baseline", "diff_base", "cache_dir", "config_file",
     "time_budget"}
)


_Entry = tuple[str, "str | None", FileResult]  # content key, stat stamp (when trusted), result


class Cache:
    """The stored results of one repository under one rules/settings/tool version; a no-op without a directory."""

    def __init__(self, directory: Path | None, root: Path, ruleset: Ruleset, settings: Settings) -> None:
        self.directory = directory
        self.store = directory / "results" / namespace(root, ruleset, settings) if directory else None
        self._shards: dict[str, dict[str, _Entry]] = {}
        self._dirty: set[str] = set()
        self._used: set[str] = set()
        self._keys: dict[str, tuple[str | None, str | None]] = {}  # (content key, stat) taken before a scan

    def get(self, source: SourceFile) -> FileResult | None:
        """The stored result for SOURCE if its content and kind are unchanged; None otherwise."""
        if self.store is None:
            return None
        entry = self._shard(source.relpath).get(source.relpath)
        stamp = _stamp(source)
        if entry is not None and stamp is not None and entry[1] == stamp:
            self._used.add(source.relpath)  # unchanged since it was hashed: no need to read it again
            return entry[2]
        if entry is None and stamp is not None:  # a new file: hashed when its result comes, if still unchanged
            self._keys[source.relpath] = (None, stamp)
            return None
        key = _content_key(source)
        self._keys[source.relpath] = (key, stamp)
        if key is None or entry is None or entry[0] != key:
            return None
        if stamp is not None:
            self._shard(source.relpath)[source.relpath] = (key, stamp, entry[2])
            self._dirty.add(_shard_name(source.relpath))
        self._used.add(source.relpath)
        return entry[2]

    def put(self, source: SourceFile, result: FileResult) -> FileResult:
        """Remember RESULT for SOURCE (keyed by its content as read before the scan) and hand it back."""
        if self.store is not None:
            taken = self._keys.pop(source.relpath, None)
            key, stamp = taken if taken is not None else (_content_key(source), None)
            if key is None and stamp is not None:  # hashed while the workers scan others
                key = _content_key(source)
                if _stamp(source) != stamp:  # changed since the scan began, maybe while it was hashed: keep nothing
                    key = None
            if key is not None:
                self._shard(source.relpath)[source.relpath] = (key, stamp, result)
                self._dirty.add(_shard_name(source.relpath))
                self._used.add(source.relpath)
        return result

    def save(self, *, complete: bool) -> None:
        """Write changed shards; a COMPLETE run also drops files no longer scanned. Failures are ignored."""
        if self.store is None or self.directory is None:
            return
        if complete:
            self._forget_unused()
        with contextlib.suppress(OSError, Refused), paused():  # a cold scan writes every finding: no cycles
            _private_dir(self.store)
            for name in sorted(self._dirty):
                entries = {relpath: [key, stamp, _result_data(result)]
                           for relpath, (key, stamp, result) in self._shards[name].items()}
                _atomic_write(self.store / f"{name}.json", _dumps({"format": FORMAT, "entries": entries}))
            if complete:
                for stale in set(os.listdir(self.store)) - {f"{n}.json" for n in self._shards if self._shards[n]}:
                    os.unlink(self.store / stale)
            os.utime(self.store)
            _prune(self.store.parent)

    def _shard(self, relpath: str) -> dict[str, _Entry]:
        name = _shard_name(relpath)
        if name not in self._shards:
            assert self.store is not None
            self._shards[name] = _read(self.store / f"{name}.json")
        return self._shards[name]

    def _forget_unused(self) -> None:
        for name, entries in self._shards.items():
            unused = [relpath for relpath in entries if relpath not in self._used]
            for relpath in unused:
                del entries[relpath]
            if unused:
                self._dirty.add(name)


@dataclasses.dataclass(frozen=True)
class ReportMemo:
    """The reports of the last scan of a tree, kept whole: a scan of the same files (by their stat stamps), rules,
    settings and code hands them back without reading a result. Layout: CACHE_DIR/reports/<namespace>/<key>/, one
    UTF-8 file per report and `worst.json` (the highest severity found, for --fail-on)."""

    place: Path

    def get(self, names: list[str]) -> tuple[dict[str, str], Severity | None] | None:
        """The reports NAMES, and the worst severity, when all were kept for this key; else None."""
        kept = _load_json(self.place / "worst.json")
        worst = kept.get("worst", -1) if isinstance(kept, dict) and kept.get("format") == FORMAT else -1
        if not (worst is None or type(worst) is int and worst in Severity.__members__.values()):
            return None
        texts = {}
        for name in names:
            try:
                texts[name] = read_bytes(self.place / f"{name}.txt", limit=_MAX_FILE, private=True).decode()
            except (OSError, Refused, UnicodeDecodeError):
                return None
        return texts, None if worst is None else Severity(worst)

    def put(self, texts: dict[str, str], worst: Severity | None) -> None:
        """Keep TEXTS (name -> report) for this key, and drop what older scans of the tree kept. Failures are
        ignored."""
        with contextlib.suppress(OSError, Refused):
            _private_dir(self.place)
            for name, text in texts.items():
                _atomic_write(self.place / f"{name}.txt", text.encode())
            kept = {"format": FORMAT, "worst": None if worst is None else int(worst)}
            _atomic_write(self.place / "worst.json", _dumps(kept))
            for entry in os.scandir(self.place.parent):
                if entry.name != self.place.name and not entry.name.startswith("."):
                    shutil.rmtree(entry.path, ignore_errors=True)
            _prune(self.place.parent.parent)


def open_memo(
    root: Path, ruleset: Ruleset, settings: Settings, sources: Iterable[SourceFile], extra: Iterable[str]
) -> ReportMemo | None:
    """The report memo for a scan of SOURCES whose result also depends on EXTRA (the root as written, skipped
    files, the repository's packages...); None without a cache directory, with a baseline file that cannot be
    read, or when a file changed too recently for its stamp to be trusted."""
    if not settings.cache_dir:
        return None
    digest = hashlib.sha256()
    for part in extra:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    if settings.baseline:
        try:
            digest.update(hashlib.sha256(read_bytes(settings.baseline, limit=_MAX_FILE)).digest())
        except (OSError, Refused):  # the scan reports what is wrong with it
            return None
    for source in sources:
        stamp = _stamp(source)
        if stamp is None:
            return None
        digest.update(f"{source.relpath}\0{stamp}\n".encode("utf-8", "surrogateescape"))
    place = Path(settings.cache_dir) / "reports" / namespace(root, ruleset, settings) / digest.hexdigest()[:32]
    return ReportMemo(place)


def _shard_name(relpath: str) -> str:
    return f"{zlib.crc32(relpath.encode('utf-8', 'surrogateescape')) % _SHARDS:02x}"


def load_ruleset(settings: Settings, load: Callable[[], Ruleset]) -> Ruleset:
    """LOAD's validated ruleset, kept as JSON until a rule file, our code or the settings change.

    Reading and validating the YAML costs more than checking a few files, so `migrate check` keeps it."""
    if settings.cache_dir is None:
        return load()
    directory = Path(settings.cache_dir)
    check_directory(directory)
    path = directory / "rulesets" / f"{_ruleset_key(settings)}.json"
    found = _rules_from(_load_json(path))
    if found is not None:
        return found
    ruleset = load()
    document = _rules_data(ruleset)
    if document is not None:
        with contextlib.suppress(OSError, Refused):
            _private_dir(path.parent)
            _atomic_write(path, document)
            _prune(path.parent)
    return ruleset


def check_directory(directory: Path) -> None:
    """ConfigError unless DIRECTORY (when it exists) is the user's own and no one else may write to it."""
    try:
        info = os.stat(directory)
    except OSError:
        return  # created (private) on the first write, or not at all
    try:
        check_private(info)
    except Refused as exc:
        raise ConfigError(f"cache directory {directory} is {exc}: refused (use another --cache-dir or --no-cache)") from None


def _private_dir(path: Path) -> None:
    """Create PATH and its missing parents (mode 0700); Refused when PATH is not the user's own."""
    missing = [path, *(parent for parent in path.parents if not parent.exists())]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    check_private(os.stat(path))


def _ruleset_key(settings: Settings) -> str:
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{_code_digest()}\0".encode())
    digest.update(f"{_stable(settings.disabled_rules)}\0{settings.severity_overrides!r}".encode())
    for directory in settings.extra_rule_dirs:
        digest.update(f"\0{directory}\0{_tree_digest(Path(directory))}".encode())
    return digest.hexdigest()[:32]


def open_cache(root: Path, ruleset: Ruleset, settings: Settings) -> Cache:
    """The cache for this run: settings.cache_dir, or a no-op cache when it is None."""
    if settings.cache_dir:
        check_directory(Path(settings.cache_dir))
    return Cache(Path(settings.cache_dir) if settings.cache_dir else None, root, ruleset, settings)


def namespace(root: Path, ruleset: Ruleset, settings: Settings) -> str:
    """A digest of everything besides a file's own content that decides its findings."""
    per_file = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name not in _NOT_PER_FILE}
    digest = hashlib.sha256()
    for part in (str(Path(root).resolve()), __version__, _code_digest(), _rules_digest(ruleset), _stable(per_file)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()[:32]


def _stable(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{_stable(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(repr(v) for v in value)) + "}"
    return repr(value)


def _rules_digest(ruleset: Ruleset) -> str:
    """Every field of every rule, not only what Ruleset.version covers (hip text, category, ...)."""
    return hashlib.sha256("\n".join(repr(rule) for rule in ruleset.rules).encode()).hexdigest()


@cache
def _code_digest() -> str:
    """Size and mtime of our own code and rule data, so an edited checkout never reads old results."""
    return _tree_digest(Path(__file__).resolve().parent) + _tree_digest(rules_dir())


def _tree_digest(top: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            with contextlib.suppress(OSError):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


_SETTLED_NS = 2_000_000_000  # a file modified this recently may change again within the same mtime tick


def _stamp(source: SourceFile) -> str | None:
    """Size, mtime, ctime and inode of SOURCE (and its kind): equal stamps mean unchanged content, as for git's
    index. None for a file modified in the last two seconds, whose mtime alone could miss the next edit.
    ctime cannot be set back by a user, so touching a file back to its old mtime still changes its stamp."""
    try:
        info = os.stat(source.path)
    except OSError:
        return None
    if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < _SETTLED_NS:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:{source.kind.value}:{int(source.vendored)}"


def _content_key(source: SourceFile) -> str | None:
    try:
        data = source.path.read_bytes()
    except OSError:
        return None
    digest = hashlib.blake2b(data, digest_size=20)
    digest.update(f"\0{source.kind.value}\0{int(source.vendored)}".encode())
    return digest.hexdigest()


def _load_json(path: Path) -> Any:
    """The JSON in PATH when it is a regular file of the user's own that no one else may write; else None."""
    try:
        return json.loads(read_bytes(path, limit=_MAX_FILE, private=True))
    except (OSError, Refused, ValueError, RecursionError):
        return None


def _dumps(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"))  # ASCII: surrogate-escaped paths survive as \udcXX


def _read(path: Path) -> dict[str, _Entry]:
    """A shard's entries; a missing, corrupt or foreign file counts as empty, and so does a malformed entry."""
    with paused():
        return _entries(_load_json(path))


def _entries(found: Any) -> dict[str, _Entry]:
    if not (isinstance(found, dict) and found.get("format") == FORMAT and isinstance(found.get("entries"), dict)):
        return {}
    entries = {}
    for relpath, value in found["entries"].items():
        if isinstance(value, list) and len(value) == 3 and type(value[0]) is str and type(value[1]) in (str, type(None)):
            result = _result_from(relpath, value[2])
            if result is not None:
                entries[relpath] = (value[0], value[1], result)
    return entries


_FINDING_FIELDS = [f.name for f in dataclasses.fields(Finding)]
_SEVERITIES = tuple(Severity)


def _result_data(result: FileResult) -> list[Any]:
    skipped = [result.skipped.path, result.skipped.reason] if result.skipped else None
    evidence = [[e.kind, e.path, e.line, e.text, e.weight] for e in result.evidence]
    return [_findings_data(result.findings), skipped, result.guarded, result.partial,
            _findings_data(result.guarded_findings), [list(d) for d in result.directives], evidence]


def _findings_data(findings: tuple[Finding, ...]) -> list[Any]:
    """Each finding as a list of its fields; occurrences (the last) as [line, column, end_line, evidence] lists."""
    return [[*_BUT_OCCURRENCES(f), [[o.line, o.column, o.end_line, o.evidence] for o in f.occurrences]]
            for f in findings]


_BUT_OCCURRENCES = operator.attrgetter(*_FINDING_FIELDS[:-1])  # one call per finding, not one per field
assert _FINDING_FIELDS[-1] == "occurrences"


def _result_from(relpath: str, data: Any) -> FileResult | None:
    """The FileResult DATA describes, or None when any field has the wrong shape."""
    if not (isinstance(data, list) and len(data) == 7):
        return None
    findings, skipped, guarded, partial, held, directives, evidence = data
    if not (type(guarded) is int and type(partial) is bool):
        return None
    if skipped is not None and not (isinstance(skipped, list) and len(skipped) == 2 and _strings(skipped)):
        return None
    restored, kept = _findings_from(findings), _findings_from(held)
    lines, facts = _directives_from(directives), _evidence_from(evidence)
    if restored is None or kept is None or lines is None or facts is None:
        return None
    skip = Skipped(*skipped) if skipped else None
    return FileResult(relpath, restored, skipped=skip, guarded=guarded, partial=partial, guarded_findings=kept,
                      directives=lines, evidence=facts)


def _findings_from(data: Any) -> tuple[Finding, ...] | None:
    if not isinstance(data, list):
        return None
    restored = []
    for fields in data:
        finding = _finding_from(fields)
        if finding is None:
            return None
        restored.append(finding)
    return tuple(restored)


def _directives_from(data: Any) -> tuple[tuple[int, str, str], ...] | None:
    if type(data) is not list:
        return None
    found = []
    for item in data:
        if not (type(item) is list and len(item) == 3):
            return None
        line, keyword, argument = item
        if not (type(line) is int and type(keyword) is str and type(argument) is str):
            return None
        found.append((line, keyword, argument))
    return tuple(found)


def _evidence_from(data: Any) -> tuple[Evidence, ...] | None:
    if not (isinstance(data, list) and all(isinstance(e, list) and len(e) == 5 and _strings([e[0], e[1], e[3]])
                                           and type(e[2]) is int and type(e[4]) is int for e in data)):
        return None
    return tuple(Evidence(*e) for e in data)


def _finding_from(fields: Any) -> Finding | None:
    # Explicit type tests, no helper calls: a warm scan of a large tree validates 100,000 findings.
    if not (type(fields) is list and len(fields) == len(_FINDING_FIELDS)):
        return None
    (path, line, column, rule, category, severity, end_line, message, evidence, hip, subs, vendored, symbol, effort,
     status, places) = fields
    if not (type(path) is str and type(rule) is str and type(category) is str and type(message) is str
            and type(evidence) is str and type(status) is str and type(line) is int and type(column) is int
            and type(end_line) is int and type(severity) is int and 0 <= severity < len(_SEVERITIES)
            and type(vendored) is bool and type(subs) is list and (hip is None or type(hip) is str)
            and (symbol is None or type(symbol) is str) and type(places) is list):
        return None
    if subs and not _strings(subs):
        return None
    if effort is not None and not (type(effort) is list and len(effort) == 2 and _numbers(effort)):
        return None
    occurrences = _occurrences_from(places) if places else ()
    if occurrences is None:
        return None
    return Finding(path, line, column, rule, category, _SEVERITIES[severity], end_line, message, evidence, hip,
                   tuple(subs), vendored, symbol, tuple(effort) if effort is not None else None, status, occurrences)


def _occurrences_from(places: list[Any]) -> tuple[Occurrence, ...] | None:
    found = []
    for place in places:
        if not (type(place) is list and len(place) == 4):
            return None
        line, column, end_line, evidence = place
        if not (type(line) is int and type(column) is int and type(end_line) is int and type(evidence) is str):
            return None
        found.append(Occurrence(line, column, end_line, evidence))
    return tuple(found)


def _severity(value: Any) -> Severity:
    if type(value) is not int or not 0 <= value < len(_SEVERITIES):
        raise ValueError("not a severity")
    return _SEVERITIES[value]


def _strings(values: list[Any]) -> bool:
    return all(type(value) is str for value in values)


def _numbers(values: list[Any]) -> bool:
    return all(type(value) in (int, float) for value in values)


_RULE_FIELDS = [f.name for f in dataclasses.fields(Rule)]


def _rules_data(ruleset: Ruleset) -> str | None:
    """The ruleset as JSON, or None when a rule holds data JSON cannot give back unchanged."""
    rules = []
    for rule in ruleset.rules:
        fields = {name: getattr(rule, name) for name in _RULE_FIELDS}
        fields["severity"] = int(rule.severity)
        fields["by_wavefront"] = [[size, int(level)] for size, level in rule.by_wavefront]
        rules.append(fields)
    try:
        text = _dumps({"format": FORMAT, "rules": rules})
    except (TypeError, ValueError):
        return None
    back = _rules_from(json.loads(text))
    same = back == ruleset and back is not None and all(a.match == b.match for a, b in zip(back.rules, ruleset.rules))
    return text if same else None


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
        effort=tuple(effort) if effort is not None else None, source=fields["source"],
    )


def _atomic_write(path: Path, content: str | bytes) -> None:
    from migrate.writer import write_file

    write_file(path, content, mode=0o600, durable=False)


def _prune(directory: Path) -> None:
    """Keep the most recently used stores (or ruleset pickles) in DIRECTORY."""
    entries = [e for e in os.scandir(directory) if not e.name.startswith(".")]  # temp files
    for entry in sorted(entries, key=lambda e: e.stat().st_mtime, reverse=True)[_KEEP_STORES:]:
        with contextlib.suppress(OSError):
            shutil.rmtree(entry.path) if entry.is_dir() else os.unlink(entry.path)
