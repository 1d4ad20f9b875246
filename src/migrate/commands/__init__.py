"""The CLI's commands, one module per family, each loaded only when its command runs (see `migrate.cli`)."""
