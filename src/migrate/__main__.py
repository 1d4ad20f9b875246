"""The `migrate` console script and `python -m migrate`: a plain `migrate check` (a commit hook's file names and a
few options) run without click, anything else through the command line, imported with the cyclic garbage collector
paused."""

from __future__ import annotations

import os
import sys

from migrate.codecache import kept
from migrate.gcpause import paused


def main() -> None:
    """Run the `migrate` command line."""
    if sys.argv[1:2] == ["check"] and not os.environ.get("_MIGRATE_COMPLETE"):  # click's shell completion asks that
        with paused(), kept("check", save=False):  # the model: many classes, no garbage (kept by check_run.run)
            from migrate.commands.check_run import plain, run_plain

        parsed = plain(sys.argv[2:])
        if parsed is not None:
            run_plain(*parsed)
    # click, the model and their classes: many objects, no garbage (and none to walk again later); their dataclass
    # methods and patterns compiled once per interpreter (migrate.codecache)
    with paused(), kept("cli"):
        from migrate.cli import main as run

    run()


if __name__ == "__main__":
    main()
