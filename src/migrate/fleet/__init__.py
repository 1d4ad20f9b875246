"""Audit many repositories at once: sources -> isolated scans on a Dask cluster -> one store -> one fleet report.

Nothing here is imported by a single-repository scan, and only engine.py imports `distributed` (the fleet extra)."""
