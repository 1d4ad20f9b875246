"""What a scan keeps between runs, under CACHE_DIR: per-file results, whole reports, validated rules.

Layout: CACHE_DIR/results/<namespace>/<shard>.json (results.py), CACHE_DIR/reports/<namespace>/<key>/ (reports.py),
CACHE_DIR/rulesets/<key>.json (rulesets.py); store.py holds what the three share: the namespace digest, file stamps
and the private, bounded reads and writes. The cache may sit in a shared place (`--cache-dir`), so nothing in it is
trusted: it holds plain JSON, every entry is validated when read (anything else is a miss), a cache directory that
is not the user's own or that others may write is refused, and a file in it that is not the user's own is ignored."""

from __future__ import annotations

from migrate.cache.results import Cache, open_cache
from migrate.cache.rulesets import load_ruleset
from migrate.cache.store import FORMAT, check_directory, namespace

__all__ = ["FORMAT", "Cache", "check_directory", "load_ruleset", "namespace", "open_cache"]  # reports.py: the memo's own
