"""One file: read, lex (C/C++), prefilter, parse only when a rule needs the tree, match -> its FileResult."""

from __future__ import annotations

from dataclasses import dataclass, replace

from migrate import compat_headers, matchers, rocm_status
from migrate.config import Settings
from migrate.matchers import Code
from migrate.model import Evidence, FileKind, FileResult, Rule, SourceFile, Skipped
from migrate.parse import Document, ParseError, parse, read_text
from migrate.parse.cuda import CudaDocument
from migrate.parse.lexer import Lexed, lex
from migrate.ruleset import Ruleset
from migrate.scan import budget, prefilter, warp_constants
from migrate.scan.findings import file_result
from migrate.scan.prefilter import KindRules, Plan

TOKEN_KINDS = (FileKind.CUDA, FileKind.CPP, FileKind.C)
# Parsed even when no rule applies: other tools read them too, so an invalid one is reported (skipped), never
# counted as scanned.
_VALIDATED = frozenset({FileKind.PYPROJECT})


@dataclass(frozen=True)
class Shortcuts:
    """The work a scan leaves out because it cannot change a finding; tests and benchmarks turn one off to compare."""

    tokens: bool = True  # C/C++/CUDA decided on tokens where no rule needs the tree (vendored code: always)
    python_candidates: bool = True  # Python parsed only where a rule's test finds a candidate in its text


def scan_file(source: SourceFile, ruleset: Ruleset, settings: Settings, shortcuts: Shortcuts = Shortcuts()) -> FileResult:
    """Findings for one file, or the reason it was skipped (also when it takes longer than its time budget)."""
    timer = budget.Timer()
    try:
        with budget.file_budget(settings.file_time_budget) as timer:
            return _scan_file(source, ruleset, settings, shortcuts)
    except budget.OverBudget:
        return FileResult(source.relpath, skipped=Skipped(source.relpath, budget.reason(settings.file_time_budget)))
    except (RecursionError, MemoryError):
        return FileResult(source.relpath, skipped=Skipped(source.relpath, "too deeply nested to parse"))
    except Exception:
        if not timer.expired:
            raise
        return FileResult(source.relpath, skipped=Skipped(source.relpath, budget.reason(settings.file_time_budget)))


def _scan_file(source: SourceFile, ruleset: Ruleset, settings: Settings, shortcuts: Shortcuts) -> FileResult:
    table = prefilter.table(ruleset, source.kind)
    if not table.rules:
        return FileResult(source.relpath)
    try:
        text = read_text(source)
    except ParseError as exc:
        return FileResult(source.relpath, skipped=Skipped(source.relpath, str(exc)))
    lexed = lex(text, table.tokens.words) if source.kind in TOKEN_KINDS else None
    evidence, directives = _facts(source, text, lexed)
    applicable = _parsed_rules(source, table, text, lexed, shortcuts)
    if applicable is None:
        assert lexed is not None
        found = _match_tokens(Document(source=source, text=text), lexed, table.tokens, settings)
        return replace(found, evidence=evidence, directives=directives)
    if not applicable and source.kind not in _VALIDATED:
        return FileResult(source.relpath, evidence=evidence, directives=directives)
    doc = parse(source, text)
    if isinstance(doc, Skipped):
        return FileResult(source.relpath, skipped=doc, evidence=evidence, directives=directives)
    if isinstance(doc, CudaDocument):  # the rules decided on tokens, and the #if ranges, come from the same pass
        doc.lexed = lexed
    return replace(_match(doc, applicable, settings), evidence=evidence, directives=directives)


def _parsed_rules(
    source: SourceFile, table: KindRules, text: str, lexed: Lexed | None, shortcuts: Shortcuts
) -> tuple[Rule, ...] | None:
    """The rules to run on the file's parse; None for C/C++ that needs no tree (every rule runs on its tokens)."""
    if lexed is None:
        applicable = prefilter.applicable(table, text)
        if source.kind == FileKind.PYTHON and shortcuts.python_candidates:
            return prefilter.with_candidates(applicable, Code(text, (), path=source.relpath))
        return applicable
    if not shortcuts.tokens:  # the reference the fast path is compared with: every rule on every file's tree
        return table.rules
    tree_rules = () if source.vendored else table.tokens.needing_tree(lexed)
    return _on_tree(table, tree_rules) if tree_rules else None


def _on_tree(table: KindRules, tree_rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules a parsed C/C++ file runs, in the table's order: those decided on tokens, and TREE_RULES (the others
    have no candidate in its code, so they would find nothing)."""
    wanted = {id(rule) for rule, _ in table.tokens.token_rules} | {id(rule) for rule in tree_rules}
    return tuple(rule for rule in table.rules if id(rule) in wanted)


def _facts(
    source: SourceFile, text: str, lexed: Lexed | None
) -> tuple[tuple[Evidence, ...], tuple[tuple[int, str, str], ...]]:
    """What a file tells about the project as a whole: its ROCm evidence and its preprocessor lines (with its quoted
    includes and HIP-guarded macros: compat_headers; its warp-size constants: warp_constants)."""
    if lexed is None:
        return rocm_status.evidence(source.kind, source.relpath, text), ()
    evidence = rocm_status.source_evidence(source.relpath, text, lexed.includes, lexed.directives)
    extra = compat_headers.entries(text, lexed.includes, lexed.directives, lexed.lines.line)
    constants = warp_constants.declarations(lexed.code, lexed.directives, lexed.lines.line)
    return evidence, tuple((d.line, d.keyword, d.argument) for d in (*lexed.directives, *extra, *constants))


def _match(doc: Document, rules: tuple[Rule, ...], settings: Settings) -> FileResult:
    runs = []
    for rule in rules:
        matcher = matchers.get(rule.match["matcher"])
        assert matcher is not None  # the ruleset validated every matcher name
        runs.append((rule, matcher.function(doc, rule.match)))
    return file_result(doc, runs, settings)


def _match_tokens(doc: Document, lexed: Lexed, plan: Plan, settings: Settings) -> FileResult:
    """C/C++/CUDA without a parse: the rules that can be decided on tokens, from the lexer's pass (vendored code,
    and first-party files where no rule needs the tree)."""
    doc.guarded_ranges = lexed.guarded
    return file_result(doc, [(rule, run(lexed, doc.text, rule.match)) for rule, run in plan.token_runs(doc.text)], settings)
