"""`migrate check`: new findings in a few files, for a commit hook (its work: migrate.commands.check_run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from migrate.commands.check_run import run
from migrate.commands.common import cache_options, fail_on_option, narrow_options, scan_options, target_option


@click.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@target_option
@fail_on_option
@narrow_options
@scan_options
@cache_options
def check(files: tuple[Path, ...], **options: Any) -> None:
    """Fail on new findings at or above --fail-on (default high) in FILES (all tracked files if none)."""
    sys.exit(run(files, options))
