"""The `migrate` console script and `python -m migrate`: a plain `migrate check` (a commit hook's file names and a
few options) run without click, anything else through the command line, imported with the cyclic garbage collector
paused."""

from __future__ import annotations

import os
import sys

from migrate.gcpause import paused


def main() -> None:
    """Run the `migrate` command line."""
    if sys.argv[1:2] == ["check"] and not os.environ.get("_MIGRATE_COMPLETE"):  # click's shell completion asks that
        with paused():  # the model: many classes, no garbage
            from migrate.commands.check_run import plain, run_plain

        parsed = plain(sys.argv[2:])
        if parsed is not None:
            run_plain(*parsed)
    with paused():  # click, the model and their classes: many objects, no garbage (and none to walk again later)
        from migrate.cli import main as run

    run()


if __name__ == "__main__":
    main()
