"""What the commands share without importing click: exit codes, a line written as click.echo writes it, the one-line
message and exit code of a failed command, and the unscanned-files warning. A plain `migrate check` runs on these
alone (migrate.__main__)."""

from __future__ import annotations

import os
import sys

from migrate.errors import MigrateError, interrupted

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def echo(text: str, err: bool = False) -> None:
    """TEXT and a newline on stdout (stderr with ERR), flushed: what click.echo writes to a UTF-8 text stream. A text
    with an escape character, or another stream, goes through click.echo itself (it strips ANSI codes from what is
    not a terminal, and mends a stream set to ASCII)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # `migrate check >&-`: nothing to write to, as for click
        return
    if "\x1b" in text or getattr(stream, "encoding", None) != "utf-8" or getattr(stream, "errors", None) is None:
        import click

        click.echo(text, err=err)
        return
    stream.write(text + "\n")
    stream.flush()


def failed(exc: BaseException) -> int | None:
    """Say on stderr in one line why a command failed with EXC and return its exit code: a MigrateError's own code,
    130 for an interrupt, 2 when the reader of stdout went away, 3 for a bug of ours. None for what the caller
    re-raises: SystemExit and the like, and a bug while MIGRATE_DEBUG is set."""
    if isinstance(exc, MigrateError):
        if exc.exit_code != EXIT_INTERRUPTED and interrupted(exc):  # an error a Ctrl-C caused is the interrupt
            return _interrupted()
        echo(f"migrate: error: {exc}", err=True)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return _interrupted()
    if isinstance(exc, BrokenPipeError):  # the reader went away (`migrate scan . | head -1`): nothing more to say
        _quiet_stdout()
        return EXIT_USAGE
    if not isinstance(exc, Exception):
        return None
    if interrupted(exc):
        return _interrupted()
    if os.environ.get("MIGRATE_DEBUG"):
        return None
    echo(f"migrate: internal error: {type(exc).__name__}: {exc} (set MIGRATE_DEBUG=1 for details)", err=True)
    return EXIT_INTERNAL


def _interrupted() -> int:
    echo("migrate: interrupted", err=True)
    return EXIT_INTERRUPTED


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so flushing it at exit does not fail a second time."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def warn_unscanned(unscanned: int, budget: float) -> None:
    """Say on stderr how many files the time budget left unscanned, if any."""
    if unscanned:
        echo(f"migrate: warning: the scan stopped at its time budget ({budget:g} s): {unscanned} file(s) not "
             "scanned, listed as skipped (raise it with --time-budget)", err=True)
