#!/usr/bin/env python3
"""Why a cold scan parses the first-party C/C++ files it parses: rule by rule, the files whose code test sends them to
tree-sitter, and how many of those the rule then fires in.

    PYTHONPATH=src python benchmarks/parse_reasons.py TREE            # the 40 rules that send the most files
    PYTHONPATH=src python benchmarks/parse_reasons.py TREE --top 0    # every rule that sends one

A rule whose test passes in many files and fires in few (`alone` high, `fired` near 0) is what a tighter test (a word
the query's captures must spell, as `if_code`) would take out: each such file costs a parse and the query bundles'
passes (~6 ms a file on CUTLASS + CCCL). Output is one line per rule, tab-separated, most files first.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from migrate.config import Settings
from migrate.inputs import inputs, ruleset_for
from migrate.model import SourceFile
from migrate.parse import ParseError, read_text
from migrate.parse.lexer import lex
from migrate.ruleset import Ruleset
from migrate.scan import prefilter
from migrate.scan.file import TOKEN_KINDS, scan_file


@dataclass
class Reasons:
    """Per rule: files its test passes in, files it fires in of those, files parsed for it alone, and its findings
    there; the files read and parsed, and the CPU seconds of the gate (lexing not counted)."""

    passed: Counter[str] = field(default_factory=Counter)
    fired: Counter[str] = field(default_factory=Counter)
    alone: Counter[str] = field(default_factory=Counter)
    alone_fired: Counter[str] = field(default_factory=Counter)
    files: int = 0
    parsed: int = 0
    gate_s: float = 0.0


def reasons(sources: Iterable[SourceFile], ruleset: Ruleset, settings: Settings) -> Reasons:
    """Reasons over the first-party C/C++/CUDA files of SOURCES (vendored code is never parsed)."""
    found = Reasons()
    for source in sources:
        if source.kind not in TOKEN_KINDS or source.vendored:
            continue
        try:
            text = read_text(source)
        except ParseError:
            continue
        found.files += 1
        plan = prefilter.table(ruleset, source.kind).tokens
        lexed = lex(text, plan.words)
        start = time.process_time()
        wanted = [rule.id for rule in plan.needing_tree(lexed)]
        found.gate_s += time.process_time() - start
        if wanted:
            _count(found, wanted, scan_file(source, ruleset, settings))
    return found


def _count(found: Reasons, wanted: list[str], result: object) -> None:
    found.parsed += 1
    fired = {finding.rule for finding in getattr(result, "findings", ()) or ()}
    for rule in wanted:
        found.passed[rule] += 1
        found.fired[rule] += rule in fired
    if len(wanted) == 1:
        found.alone[wanted[0]] += 1
        found.alone_fired[wanted[0]] += wanted[0] in fired


def lines(found: Reasons, top: int) -> list[str]:
    """The report: a head line, then one line per rule, most files first (TOP of them; 0: all)."""
    head = (f"# {found.parsed} of {found.files} first-party C/C++ files parsed; the tree rules' gate "
            f"{found.gate_s:.2f} CPU s")
    rows = ["rule\tpassed\tfired\talone\talone_fired"]
    for rule, count in found.passed.most_common(top or None):
        rows.append(f"{rule}\t{count}\t{found.fired[rule]}\t{found.alone[rule]}\t{found.alone_fired[rule]}")
    return [head, *rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--top", type=int, default=40, help="rules shown (0: every rule that sends a file)")
    args = parser.parse_args(argv)
    settings = Settings()
    found = reasons(inputs(args.tree, settings).sources, ruleset_for(settings), settings)
    print("\n".join(lines(found, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
