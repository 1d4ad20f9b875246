"""The defaults that the configuration applies and the command line shows, in a module that imports nothing."""

from __future__ import annotations

DEFAULT_TARGETS = ("gfx942",)
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
DEFAULT_BASELINE = ".migrate-baseline.json"
# Seconds a whole scan may take before it stops with what it has (files not reached are skipped, with the reason);
# a tree of 200,000 files takes about a minute. A repository's own config may lower it, not raise it.
DEFAULT_TIME_BUDGET = 600.0
DEFAULT_FILE_TIME_BUDGET = 20.0  # seconds one file may take; past it the file is skipped (crafted input, not real code)
STRATEGIES = ("auto", "extension", "cmake", "make", "header", "fork")  # how a port may go; auto picks from the build
