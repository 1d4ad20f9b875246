"""The one error family the CLI catches; everything else is a bug (exit 3)."""

from __future__ import annotations


class MigrateError(Exception):
    """A problem with the user's input or environment: one line, exit code 2."""

    exit_code = 2


class InputError(MigrateError):
    """A path or argument the user gave cannot be used."""


class ConfigError(MigrateError):
    """A configuration file or option is invalid."""


class RuleFileError(MigrateError):
    """A rules file is malformed; the message names the file and the rule id."""


class ToolNotFound(MigrateError):
    """An external tool (hipcc, hipify-clang, ...) is not installed."""


def interrupted(exc: BaseException) -> bool:
    """EXC stands for a Ctrl-C: a library that calls back into Python (tree-sitter compiling a query's #match?
    regexes) turns the KeyboardInterrupt raised there into its own error, which would read as a broken rule."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
