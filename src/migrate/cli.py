"""The `migrate` group: its commands (migrate.commands) loaded by name, errors turned into one line and an exit code.

Exit codes: 0 done; 1 findings at or above --fail-on; 2 usage or input error; 3 internal error;
130 interrupted.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from migrate import __version__
from migrate.commands.output import EXIT_USAGE, failed

# Each command by name -> the module of migrate.commands that defines it and the command's function there. A command's
# module is imported only when it runs (or for help that lists it), so `migrate check` builds no other command's options.
COMMANDS = {
    "apply": ("port", "apply_command"), "baseline": ("scan", "baseline_command"), "check": ("check", "check"),
    "doctor": ("info", "doctor"), "explain": ("info", "explain"), "fleet": ("fleet", "fleet"),
    "rules": ("info", "rules_command"), "scan": ("scan", "scan"), "translate": ("port", "translate"),
    "verify": ("port", "verify"),
}


class _Group(click.Group):
    """Loads each command when it is asked for; turns MigrateError into a one-line message and exit 2, anything
    unexpected into exit 3."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, function = COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(f"migrate.commands.{module}"), function), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMANDS:  # a name of no command: click suggests the closest of those it holds
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.UsageError as exc:  # one line, like every other input error
            hint = f" (see 'migrate {exc.ctx.info_name} --help')" if exc.ctx and exc.ctx.parent else ""
            click.echo(f"migrate: error: {exc.format_message()}{hint}", err=True)
            ctx.exit(EXIT_USAGE)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BaseException as exc:  # ours (MigrateError), an interrupt, a closed pipe, a bug: one line, a code
            code = failed(exc)
            if code is None:
                raise
            ctx.exit(code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migrate")
def cli() -> None:
    """Find what stands between a CUDA codebase and AMD ROCm, and port the mechanical part."""


def main() -> None:
    cli(prog_name="migrate")
