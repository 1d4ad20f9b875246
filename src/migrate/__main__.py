"""The `migrate` console script and `python -m migrate`: the command line imported with the cyclic garbage collector
paused, then run."""

from __future__ import annotations

from migrate.gcpause import paused


def main() -> None:
    """Run the `migrate` command line."""
    with paused():  # click, the model and their classes: many objects, no garbage (and none to walk again later)
        from migrate.cli import main as run

    run()


if __name__ == "__main__":
    main()
