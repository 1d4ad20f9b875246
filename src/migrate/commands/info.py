"""`migrate doctor`, `migrate explain` and `migrate rules`: what the machine has, and what the rules say."""

from __future__ import annotations

import click

from migrate.commands.common import target_option
from migrate.defaults import DEFAULT_TARGETS


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def doctor(fmt: str) -> None:
    """Show what this machine has for a port: hipify, hipcc, ROCm, GPUs, the PyTorch build."""
    from migrate import doctor as diagnosis

    report = diagnosis.diagnose()
    click.echo(diagnosis.render_json(report) if fmt == "json" else diagnosis.render_text(report), nl=False)


@click.command()
@click.argument("item_id", metavar="ID")
@target_option
def explain(item_id: str, targets: tuple[str, ...] | None) -> None:
    """Print a rule, a substitution (install commands filled in for --target) or a gfx target in full."""
    from migrate.explain import explain as describe
    from migrate.ruleset import load_builtin

    click.echo(describe(item_id, load_builtin(), targets or DEFAULT_TARGETS), nl=False)


@click.command("rules")
def rules_command() -> None:
    """List the rules: id, severity, category, title."""
    from migrate.explain import rules_table
    from migrate.ruleset import load_builtin

    click.echo(rules_table(load_builtin()), nl=False)

