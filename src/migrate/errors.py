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
