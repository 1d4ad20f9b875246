"""Which of a file's rules can fire, decided before a parse: the rules' needles in its text, then the matchers' tests
on its code; for C/C++, which rules the lexer's tokens decide and which need the tree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from ahocorasick_rs import AhoCorasick, Implementation

from migrate import matchers
from migrate.matchers import Code, CodeTest, TokenMatch
from migrate.model import FileKind, Rule
from migrate.parse.lexer import Lexed
from migrate.ruleset import Ruleset


@dataclass(frozen=True)
class Plan:
    """How one file kind's rules run on C/C++ tokens: the words the lexer looks for, the rules decided on tokens,
    and the test on a file's code that asks for its tree, rule by rule, each asked only where the code holds one of
    its rule's needles (`gate`: the tree rules' needle table, in the order of `tree_tests`; `token_gate`: the token
    rules', in the order of `token_rules`)."""

    words: frozenset[str]
    token_rules: tuple[tuple[Rule, TokenMatch], ...]
    tree_tests: tuple[tuple[Rule, CodeTest], ...]
    gate: KindRules
    token_gate: KindRules

    def token_runs(self, text: str) -> tuple[tuple[Rule, TokenMatch], ...]:
        """The token rules that can fire in TEXT: those one of whose needles it holds, and those without needles.
        Found in one pass for every rule: most rules' needles are in few files, and a rule asked of a file costs
        its matcher's setup even where it finds nothing."""
        missing = _missing(self.token_gate, text)
        if not missing:
            return self.token_rules
        return tuple(pair for index, pair in enumerate(self.token_rules) if not missing >> index & 1)

    def needing_tree(self, lexed: Lexed) -> tuple[Rule, ...]:
        """The rules whose findings in a first-party file would change with its tree: those whose code (with its
        #include paths) holds one of their needles, found in one pass for every rule, and whose test then passes
        on it (a rule without tokens finds nothing where its test fails; every test is implied by its needles)."""
        code = Code(lexed.code, [path for path, _ in lexed.includes], frozenset(word for word, _ in lexed.words),
                    [template for _, template in lexed.templates])
        missing = _missing(self.gate, code.with_includes)
        return tuple(rule for index, (rule, test) in enumerate(self.tree_tests)
                     if not missing >> index & 1 and test(code))


@dataclass(frozen=True)
class KindRules:
    """One kind's rules, and which of them (a bit mask) each needle satisfies."""

    rules: tuple[Rule, ...]
    searched: int  # the rules with needles
    rules_of: dict[str, int]

    @cached_property
    def needles(self) -> tuple[Needles, list[int], int]:
        """An automaton of every needle, each needle's rules by its index, and the longest needle's length."""
        names = sorted(self.rules_of)
        return Needles(names), [self.rules_of[n] for n in names], max(map(len, names), default=1)

    @cached_property
    def tokens(self) -> Plan:
        """How these rules run on tokens."""
        return _plan(self.rules)


class Needles:
    """An automaton of NAMES, for overlapping searches: a contiguous NFA for a process's first texts, then a DFA.
    Both find the same matches (the implementation changes none). The DFA finds them in ~0.7 of the time (CUTLASS +
    CCCL's needle passes: 0.53 -> 0.36 CPU s), but costs 3-8 ms to build where the NFA costs ~1 (~1,000 needles): a
    check of a few files searches each kind's tables a few times, and paid ~10 ms for three DFAs."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.automaton = AhoCorasick(names, implementation=Implementation.ContiguousNFA)
        self.left = _NFA_SEARCHES  # searches before the DFA is built

    def find(self, text: str) -> list[tuple[int, int, int]]:
        """(needle index, start, end) of every occurrence of every needle in TEXT."""
        self.left -= 1
        if not self.left:
            self.automaton = AhoCorasick(self.names, implementation=Implementation.DFA)
        return self.automaton.find_matches_as_indexes(text, overlapping=True)


_NFA_SEARCHES = 256  # a DFA saves ~13 µs a search (its build's cost after ~400 texts)


def applicable(table: KindRules, text: str) -> tuple[Rule, ...]:
    """The rules of TABLE whose needles occur in TEXT (rules without needles always apply)."""
    missing = _missing(table, text)
    if not missing:
        return table.rules
    return tuple(rule for index, rule in enumerate(table.rules) if not missing >> index & 1)


def _missing(table: KindRules, text: str) -> int:
    """A bit mask over TABLE's rules: those with needles none of which occurs in TEXT.

    One pass of an automaton of every needle finds each needle that occurs, window by window, so that a file whose
    rules all apply early is not searched to its end and a common needle's matches never pile up."""
    remaining = table.searched
    if not remaining:
        return 0
    automaton, masks, longest = table.needles
    for start in range(0, len(text), _WINDOW):
        window = text[start : start + _WINDOW + longest - 1]  # a needle that starts in the window ends in it
        for index in {index for index, _, _ in automaton.find(window)}:
            remaining &= ~masks[index]
        if not remaining:
            return 0
    return remaining


_WINDOW = 1 << 16  # characters of a file searched for needles at a time


def with_candidates(rules: tuple[Rule, ...], code: Code) -> tuple[Rule, ...]:
    """The RULES whose matcher's test finds a candidate in CODE (a Python file's text): the rest cannot fire."""
    return tuple(rule for rule in rules if _code_test(rule)(code))


@cache
def _code_test(rule: Rule) -> CodeTest:
    candidates = _hooks(rule).candidates
    return candidates(rule.match) if candidates else _always


_TABLES: dict[FileKind, tuple[Ruleset, KindRules]] = {}


def table(ruleset: Ruleset, kind: FileKind) -> KindRules:
    """The needle table of KIND's rules (kept per process while the ruleset stays the same object)."""
    kept = _TABLES.get(kind)
    if kept is None or kept[0] is not ruleset:
        if kind in _C_FAMILY:
            _prepare(ruleset)
        kept = _TABLES[kind] = (ruleset, _kind_rules(ruleset.for_kind(kind)))
    return kept[1]


_C_FAMILY = (FileKind.CUDA, FileKind.CPP, FileKind.C)
_prepared: list[Ruleset] = []  # the ruleset whose C/C++ matchers are prepared


def _prepare(ruleset: Ruleset) -> None:
    """The `prepare` hooks of the C/C++ rules' matchers, once per ruleset and for all three kinds at once (the
    cuda-query rules register their queries: one bundle for every kind, compiled once)."""
    if not (_prepared and _prepared[0] is ruleset):
        matchers.prepare([r.match for r in ruleset.rules if any(k.value in r.languages for k in _C_FAMILY)])
        _prepared[:] = [ruleset]


def _kind_rules(rules: tuple[Rule, ...]) -> KindRules:
    by_needle: dict[str, int] = {}
    searched = 0
    for index, rule in enumerate(rules):
        found = rule_needles(rule)
        if found is None or "" in found:  # the empty needle is in every text
            continue
        searched |= 1 << index
        for needle in found:
            by_needle[needle] = by_needle.get(needle, 0) | 1 << index
    return KindRules(rules, searched, by_needle)


@cache
def rule_needles(rule: Rule) -> frozenset[str] | None:
    """Strings one of which must occur in a file for RULE to fire; None when it must always run."""
    needles = _hooks(rule).needles
    found = needles(rule.match) if needles else None
    return frozenset(found) if found is not None else None


def _plan(rules: tuple[Rule, ...]) -> Plan:
    """The token plan of RULES (made once per ruleset and kind): the lexer looks for the identifiers every rule's
    matcher declares, for the token rules and for the code tests alike."""
    tests = []
    identifiers: set[str] = set()
    for rule in rules:
        hooks = _hooks(rule)
        identifiers.update(hooks.identifiers(rule.match) if hooks.identifiers else ())
        if hooks.candidates:
            tests.append((rule, _deferred(hooks.candidates, rule.match)))
        elif hooks.tokens is None:
            tests.append((rule, _always))
    kept = tuple((r, m) for r in rules if (m := token_form(r)) is not None)
    words = frozenset(identifiers)
    # One object per set of words: the regex cache and Lexed.searched compare sets of ~8,000 names, which costs
    # 30 µs a file unless they are the same object.
    return Plan(_SAME_WORDS.setdefault(words, words), kept, tuple(tests), _kind_rules(tuple(r for r, _ in tests)),
                _kind_rules(tuple(r for r, _ in kept)))


_SAME_WORDS: dict[frozenset[str], frozenset[str]] = {}


def _deferred(candidates: matchers.Candidates, params: Mapping[str, Any]) -> CodeTest:
    """The code test CANDIDATES makes of PARAMS, made when first asked: a test is asked only where the code holds
    one of its rule's needles, and making one compiles its regexes (a check of 10 CUTLASS files asks 13 of the CUDA
    rules' 59 tests; making the other 46 cost ~5 ms)."""
    made: list[CodeTest] = []

    def test(code: Code) -> bool:
        if not made:
            made.append(candidates(params))
        return made[0](code)

    return test


def _always(_code: Code) -> bool:
    return True


def token_form(rule: Rule) -> TokenMatch | None:
    """RULE decided on tokens alone, or None when it needs the tree (it does not run on vendored code)."""
    return _hooks(rule).tokens


def _hooks(rule: Rule) -> matchers.FastPath:
    matcher = matchers.get(rule.match["matcher"])
    assert matcher is not None  # the ruleset validated every matcher name
    return matcher.fast
