#!/usr/bin/env python3
"""Write docs/rules.md, the list of every built-in rule, from rules/*.yaml.

Run from the repository root after changing a rule:  .venv/bin/python scripts/rules_docs.py
`--check` writes nothing and exits 1 when docs/rules.md differs from what the rules say (tests/test_docs.py runs it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from migrate.model import Rule
from migrate.ruleset import load

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
OUTPUT = ROOT / "docs" / "rules.md"
HEADER = """\
# Rules

Every built-in rule, by rule file: generated from `rules/*.yaml` by `scripts/rules_docs.py` (do not edit by hand;
run `.venv/bin/python scripts/rules_docs.py` after changing a rule). `migrate explain RULE` shows a rule in full:
its message, its ROCm replacement and the fact behind its severity. What the families find and why is in
[cuda-rules.md](cuda-rules.md) and [python-rules.md](python-rules.md); a repository turns rules off or changes
their severity in `[tool.migrate]` ([guide.md](guide.md)).
"""


def render(rules: Iterable[Rule]) -> str:
    """The Markdown page: one table per rule file, the rules in file order."""
    ordered = list(rules)
    parts = [HEADER, f"{len(ordered)} rules in {len({_file(r) for r in ordered})} files.\n"]
    for name, group in groupby(ordered, key=_file):
        parts.append(f"## `rules/{name}`\n\n| rule | title | category | severity | languages |\n| --- | --- | --- | --- | --- |")
        parts.extend(_row(rule) for rule in group)
        parts.append("")
    return "\n".join(parts)


def _file(rule: Rule) -> str:
    return Path(rule.source).name


def _row(rule: Rule) -> str:
    cells = [f"`{rule.id}`", _cell(rule.title), rule.category, _severity(rule), ", ".join(rule.languages)]
    return "| " + " | ".join(cells) + " |"


def _severity(rule: Rule) -> str:
    """The severity, or one per wavefront size where the rule has them (warp-size rules)."""
    if not rule.by_wavefront:
        return rule.severity.label
    return ", ".join(f"{severity.label} on wave{size}" for size, severity in sorted(rule.by_wavefront, reverse=True))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/rules.md is stale; write nothing")
    args = parser.parse_args(argv)
    text = render(load([RULES]).rules)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.is_file() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run .venv/bin/python scripts/rules_docs.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
