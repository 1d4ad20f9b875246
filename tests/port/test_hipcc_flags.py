"""rules/data/hipcc_flags.yaml records what hipcc does with nvcc options; the build rules and real hipcc agree with it."""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

import pytest
import yaml

from migrate.data import data_path
from migrate.ruleset import load_builtin

from conftest import require_tool


@cache
def recorded() -> dict[str, Any]:
    return dict(yaml.safe_load(data_path("hipcc_flags.yaml").read_text(encoding="utf-8")))


def _pattern(rule_id: str) -> re.Pattern[str]:
    rule = next(r for r in load_builtin().rules if r.id == rule_id)
    return re.compile(rule.match["pattern"])


@pytest.mark.parametrize(("table", "fires", "quiet"), [
    ("hipcc_rejects", "nvcc-flag-hipcc-rejects", "nvcc-flag-hipcc-ignores"),
    ("hipcc_ignores", "nvcc-flag-hipcc-ignores", "nvcc-flag-hipcc-rejects"),
])
def test_each_recorded_option_is_reported_by_its_rule(table: str, fires: str, quiet: str) -> None:
    options = [example.split()[0] for example in recorded()[table]]
    assert [o for o in options if not _pattern(fires).fullmatch(o)] == []
    assert [o for o in options if _pattern(quiet).fullmatch(o)] == []


def _compiles(hipcc: str, options: str) -> bool:
    command = [hipcc, "-fsyntax-only", "-x", "hip", os.devnull, "--offload-arch=gfx90a", *options.split()]
    done = subprocess.run(command, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True, timeout=120)
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_hipcc_rejects_and_ignores_what_the_data_says() -> None:
    hipcc = require_tool("hipcc")
    rejects, ignores = recorded()["hipcc_rejects"], recorded()["hipcc_ignores"]
    spellings = sorted({v for v in recorded()["words"].values() if v.startswith("-") and not v.startswith("-l")})
    with ThreadPoolExecutor(max_workers=4) as pool:
        accepted = [o for o, ok in zip(rejects, pool.map(lambda o: _compiles(hipcc, o), rejects)) if ok]
    assert accepted == [], "hipcc accepts these"
    # the accepted ones compile together (one run each list: a compile that gets through costs seconds)
    assert _compiles(hipcc, " ".join(ignores)), [o for o in ignores if not _compiles(hipcc, o)]
    assert _compiles(hipcc, " ".join(spellings)), [o for o in spellings if not _compiles(hipcc, o)]
