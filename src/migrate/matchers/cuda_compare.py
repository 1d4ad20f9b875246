"""Comparisons of a macro (`__CUDA_ARCH__ >= 800`, `CUDA_VERSION < 12000`) in code and #if conditions, or its uses as a
value (`return CUDART_VERSION;`), found on tokens in every file: tree-sitter reads an #if condition only where it
makes sense of the code around it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, register, require_flags
from migrate.matchers.cuda_arch_body import vanishing_bodies
from migrate.matchers.cuda_common import directive_head, in_directive
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed
from migrate.preproc import Directive


def _validate(params: Mapping[str, Any]) -> None:
    names = params.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError("cuda-compare needs 'names': a non-empty list of identifiers")
    require_flags(params, "uses", "branches")
    if params.get("uses") and params.get("branches"):
        raise ValueError("'uses' and 'branches' exclude each other")
    tested = params.get("tested", [])
    if not isinstance(tested, list) or not all(isinstance(n, str) and n.isidentifier() for n in tested):
        raise ValueError("'tested' must be a list of identifiers")
    if tested and not params.get("branches"):
        raise ValueError("'tested' needs 'branches: true'")
    unless = params.get("unless_tested", [])
    if not isinstance(unless, list) or not all(isinstance(n, str) and n.isidentifier() for n in unless):
        raise ValueError("'unless_tested' must be a list of identifiers")
    if unless and not params.get("branches"):
        raise ValueError("'unless_tested' needs 'branches: true'")
    if params.get("bodies", "all") not in ("all", "only", "skip"):
        raise ValueError("'bodies' must be all, only or skip")
    if params.get("bodies", "all") != "all" and (params.get("uses") or params.get("branches")):
        raise ValueError("'bodies' goes with comparisons only")


# The name may be scaled first and its group closed: `(__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10) >= 12040`.
_COMPARISON_AFTER = lazy_regex(
    r"(?:[ \t]*[*/+-][ \t]*\w+)*[ \t]*\)*"
    r"[ \t]*(<=|>=|==|!=|<(?![<=])|>(?![>=]))[ \t]*(\(*[ \t]*[-!]?[ \t]*[A-Za-z_0-9]\w*)"
)


_COMPARISON_BEFORE = lazy_regex(r"([A-Za-z_0-9]\w*\)*)([ \t]*)(<=|>=|==|!=|<|>)[ \t]*$")


def compare_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """A comparison (< <= > >= == !=) with one of the rule's names as an operand, in code or in an #if / #elif
    condition (a #define body is not an expression yet): once per line, at the comparison's left operand. With
    `uses: true`, instead each line of code (no directive) that uses one of the names as a value, not compared; with
    `branches: true`, instead the #elif / #else / #endif lines that follow such an #if / #elif in its chain. With
    `bodies: only` just the #if lines that hold a device function's whole body with no #else (cuda_arch_body),
    with `bodies: skip` all the others."""
    if params.get("uses"):
        yield from _value_hits(lexed, code, frozenset(params["names"]))
        return
    if params.get("branches"):
        yield from _branch_hits(lexed, params)
        return
    names = frozenset(params["names"])
    bodies = params.get("bodies", "all")
    vanishing: frozenset[int] | None = None  # read on the first comparison, where `bodies` asks
    seen: set[int] = set()
    for offset, word in lexed.places(names):
        if not _expression_context(code, offset):
            continue
        place = _comparison(code, offset, offset + len(word))
        if place is None:
            continue
        start, symbol = place
        line, column = lexed.point(start)
        if line in seen:
            continue
        if bodies != "all":
            vanishing = vanishing_bodies(lexed) if vanishing is None else vanishing
            if (line in vanishing) != (bodies == "only"):
                continue
        seen.add(line)
        yield Hit(line, column, symbol=" ".join(symbol.split()))


def _names(params: Mapping[str, Any]) -> list[str]:
    return [*params["names"], *params.get("tested", ())]


@register("cuda-compare", validate=_validate, needles=_names, identifiers=lambda p: frozenset(_names(p)),
          tokens=compare_hits)
def match_cuda_compare(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line comparing one of `names` with < <= > >= == or !=, at the comparison's left operand (with `uses`,
    each line of code using one as a value instead)."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(frozenset(_names(params)))
    return compare_hits(lexed, lexed.code, params)


def _branch_hits(lexed: Lexed, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The later branches (#elif, #else) and the #endif of each #if / #elif chain one of whose conditions compares a
    name (or tests one of `tested` at all, #ifdef included; not a name the file #defines itself): where a build that
    leaves the name undefined (hipcc) lands, and where a port puts its HIP branch. None in a file whose conditionals
    test one of `unless_tested` anywhere (its ROCm branches are written: a block left CUDA-only there is a choice)."""
    compared = frozenset(params["names"]) - lexed.defined  # a macro the file sets is its own
    tested = frozenset(params.get("tested", ())) - lexed.defined
    unless = frozenset(params.get("unless_tested", ()))
    if unless and any(d.keyword in _TESTS and unless & _words(d.argument) for d in lexed.directives):
        return
    chosen = {d.line for d in lexed.directives if _chooses(d, compared, tested)}
    if not chosen:
        return
    for chain in chains(lexed.directives):
        first = next((index for index, (line, _) in enumerate(chain) if line in chosen), None)
        if first is not None:
            for line, keyword in chain[first + 1 :]:
                yield Hit(line, 1, symbol=f"#{keyword}")


def _chooses(directive: Directive, compared: frozenset[str], tested: frozenset[str]) -> bool:
    """DIRECTIVE (its argument joined across continuation lines) compares one of COMPARED in an #if / #elif, or
    tests one of TESTED in any conditional."""
    if directive.keyword not in _TESTS:
        return False
    words = _words(directive.argument)
    if tested & words:
        return True
    if directive.keyword not in ("if", "elif") or not compared & words:
        return False
    argument = directive.argument
    return any(_comparison(argument, m.start(), m.end()) for m in _WORD.finditer(argument) if m.group() in compared)


_TESTS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})
_WORD = lazy_regex(r"[A-Za-z_]\w*")


def _words(argument: str) -> frozenset[str]:
    return frozenset(_WORD.findall(argument))


def chains(directives: Iterable[Directive]) -> Iterator[list[tuple[int, str]]]:
    """Each #if / #ifdef / #ifndef chain of DIRECTIVES as its (line, keyword) list, from the opening line to #endif;
    an unclosed chain is left out."""
    open_chains: list[list[tuple[int, str]]] = []
    for directive in directives:
        keyword = directive.keyword
        if keyword in ("if", "ifdef", "ifndef"):
            open_chains.append([(directive.line, keyword)])
        elif open_chains and keyword in ("elif", "elifdef", "elifndef", "else"):
            open_chains[-1].append((directive.line, keyword))
        elif open_chains and keyword == "endif":
            chain = open_chains.pop()
            chain.append((directive.line, keyword))
            yield chain


def _value_hits(lexed: Lexed, code: str, names: frozenset[str]) -> Iterator[Hit]:
    """Each line of code (outside directives, so `#ifdef NAME` and `defined(NAME)` stay quiet) where one of NAMES is
    used as a value: returned, assigned, printed or computed with, not compared (the comparison rule's place)."""
    seen: set[int] = set()
    for offset, word in lexed.places(names):
        if in_directive(code, offset) or _comparison(code, offset, offset + len(word)):
            continue
        line, column = lexed.point(offset)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=word)


def _comparison(code: str, start: int, end: int) -> tuple[int, str] | None:
    """(offset of the left operand, the comparison's text) when the name at START..END is compared."""
    after = _COMPARISON_AFTER.match(code, end)
    if after and not (after.group(1) == ">" and code[after.end(1) :].lstrip().startswith("::")):
        return start, code[start : after.end()]
    before = _COMPARISON_BEFORE.search(code, max(0, start - 80), start)
    if before is None or before.end() != start:
        return None
    if before.group(3) == "<" and not before.group(2) and code[start - 1] == "<":
        return None  # Foo<NAME: a template argument
    if code[before.start() - 1 : before.start()] in (".", ":", ">") or code[before.start(3) - 1] in "<>-=!":
        return None  # a member, a scoped name, or part of <<, >>, ->, <=>
    return before.start(), code[before.start() : end]


def _expression_context(code: str, offset: int) -> bool:
    """Code, or the condition of an #if / #elif; not another directive."""
    head = directive_head(code, offset)
    return not head.startswith("#") or re.match(r"#\s*(?:if|elif)\b", head) is not None
