"""Text for `migrate explain ID` (a rule or a substitution in full) and `migrate rules` (the rule list)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from migrate import substitutions, targets
from migrate.errors import InputError
from migrate.model import Rule
from migrate.ruleset import Ruleset

_WIDTH = 100


def explain(item_id: str, ruleset: Ruleset, gfx_targets: tuple[str, ...]) -> str:
    """A rule or a substitution in full; an InputError when ITEM_ID is neither."""
    rule = ruleset.by_id(item_id)
    if rule is not None:
        return explain_rule(rule)
    entry = substitutions.knowledge_base().get(item_id)
    if entry is not None:
        return explain_substitution(entry, gfx_targets)
    target = targets.get(item_id)
    if target is not None:
        return explain_target(target)
    reason = substitutions.dropped().get(item_id)
    if reason is not None:
        raise InputError(f"{item_id} is not proposed by migrate: {reason}")
    raise InputError(
        f"no rule, substitution or target named {item_id!r} (see `migrate rules` and docs/knowledge-base.md)"
    )


def _effort(rule: Rule) -> str:
    if rule.effort is None:
        return f"the {rule.severity.label} x {rule.category} default of rules/data/risk.yaml"
    return f"{rule.effort[0]:g}-{rule.effort[1]:g} engineer-days per finding"


def explain_rule(rule: Rule) -> str:
    """Every field of a rule, one per line."""
    lines = [
        f"rule {rule.id}: {rule.title}",
        f"  category:      {rule.category}",
        f"  severity:      {rule.severity.label}{_by_wavefront(rule)}",
        f"  files:         {', '.join(rule.languages)}",
        f"  effort:        {_effort(rule)}",
        f"  ROCm:          {rule.hip or '-'}",
        f"  substitutions: {', '.join(rule.substitutions) or '-'}",
        f"  matcher:       {rule.match['matcher']}",
        f"  defined in:    rules/{Path(rule.source).name}",
        "",
        *_wrap(rule.message, "  "),
    ]
    return "\n".join(lines) + "\n"


def _by_wavefront(rule: Rule) -> str:
    if not rule.by_wavefront:
        return ""
    return f" (by wavefront: {', '.join(f'{w}-wide {s.label}' for w, s in rule.by_wavefront)})"


def explain_substitution(entry: substitutions.Entry, gfx_targets: tuple[str, ...]) -> str:
    """Every field of a substitution, with install commands and notes for GFX_TARGETS."""
    shown = substitutions.for_targets(entry, gfx_targets)
    lines = [f"substitution {entry.id} ({entry.kind}, risk {entry.risk}, confidence {entry.confidence})"]
    lines += _section("replaces", entry.replaces)
    lines += _section("ROCm substitute", entry.rocm or ("none",))
    lines += _section(f"install ({', '.join(gfx_targets)})", shown.install or ("no install command",), wrap=False)
    archs = (entry.archs_note or ", ".join(entry.archs)) if entry.archs else "none"
    lines += _section("targets", (f"listed: {archs}", *(f"{gfx}: {note}" for gfx, note in shown.target_notes)))
    lines += _section("ROCm versions", (entry.rocm_versions,))
    lines += _section("caveats", entry.caveats)
    lines += _section("unconfirmed", entry.unconfirmed)
    lines += _section(f"sources (as of {entry.as_of})", entry.sources)
    return "\n".join(lines) + "\n"


def explain_target(target: targets.Target) -> str:
    """A GPU target: products, wavefront, Linux support per ROCm line, notes and sources."""
    wave = f"{target.wavefront}-wide by default" if target.wavefront else "unknown"
    lines = [f"target {target.name}: {target.family} {target.architecture}, wavefront {wave}"]
    lines += _section("products", target.products)
    per_line = tuple(f"{targets.line_label(line)}: {status}" for line, status in target.linux)
    lines += _section("Linux support", (targets.support_note(target.name), *per_line))
    lines += _section("notes", target.notes)
    lines += _section(f"sources (as of {target.as_of}, confidence {target.confidence})", target.sources)
    return "\n".join(lines) + "\n"


def _section(title: str, items: tuple[str, ...] | list[str], *, wrap: bool = True) -> list[str]:
    if not items:
        return []
    body = [line for item in items for line in (_wrap(item, "  - ", "    ") if wrap else [f"    {item}"])]
    return ["", f"{title}:", *body]


def _wrap(text: str, first: str, rest: str | None = None) -> list[str]:
    if "://" in text:
        return [first + text]  # URLs stay on one line so they can be copied
    return textwrap.wrap(text, _WIDTH, initial_indent=first, subsequent_indent=rest if rest is not None else first)


def rules_table(ruleset: Ruleset) -> str:
    """One line per rule: id, severity, category, title."""
    width = max((len(r.id) for r in ruleset.rules), default=2)
    lines = [f"{'id':<{width}}  {'severity':<8}  {'category':<22}  title"]
    for rule in sorted(ruleset.rules, key=lambda r: r.id):
        lines.append(f"{rule.id:<{width}}  {rule.severity.label:<8}  {rule.category:<22}  {rule.title}")
    return "\n".join(lines) + "\n"
