"""Docs that stay true: the generated rule list, the headers of rules/data, and no path of one machine."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from migrate.ruleset import load

from conftest import ROOT

DOCS = ROOT / "docs"
DATA = ROOT / "rules" / "data"
_READ_BY = re.compile(r"Read by\s+(src/migrate/\S+?\.py)")
_MODULE = re.compile(r"src/migrate/[\w/]+\.py")


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rule_list_is_what_the_rules_say() -> None:
    rules_docs = _script("rules_docs")
    expected = rules_docs.render(load([ROOT / "rules"]).rules)
    assert (DOCS / "rules.md").read_text(encoding="utf-8") == expected, (
        "docs/rules.md is stale: run .venv/bin/python scripts/rules_docs.py")


def test_every_rule_is_on_the_rule_list() -> None:
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", text, re.M))
    assert listed == {rule.id for rule in load([ROOT / "rules"]).rules}


def test_check_mode_fails_on_a_stale_list(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rules_docs = _script("rules_docs")
    stale = tmp_path / "rules.md"
    stale.write_text("# Rules\n", encoding="utf-8")
    monkeypatch.setattr(rules_docs, "OUTPUT", stale)
    monkeypatch.setattr(rules_docs, "ROOT", tmp_path)
    assert rules_docs.main(["--check"]) == 1
    assert rules_docs.main([]) == 0 and rules_docs.main(["--check"]) == 0


def test_the_pages_that_list_rules_link_the_full_list() -> None:
    for page in ("cuda-rules.md", "python-rules.md", "knowledge-base.md", "guide.md"):
        assert "(rules.md)" in (DOCS / page).read_text(encoding="utf-8"), page


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.iterdir()))
def test_each_data_file_names_the_module_that_reads_it(name: str) -> None:
    header = "".join(line[1:] for line in _leading_comments(DATA / name))
    reader = _READ_BY.search(" ".join(header.split()))
    assert reader is not None, f"rules/data/{name}: the header says no 'Read by src/migrate/....py'"
    assert name in (ROOT / reader.group(1)).read_text(encoding="utf-8"), f"{reader.group(1)} does not read {name}"
    for module in _MODULE.findall(header):
        assert (ROOT / module).is_file(), f"rules/data/{name} names {module}, which does not exist"


def _leading_comments(path: Path) -> list[str]:
    lines = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            lines.append(line)
    return lines


def test_no_doc_names_a_path_on_one_machine() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{number}" for page in pages
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
             if re.search(r"(?<![\w.])/(?:work|root|home/\w+|tmp/speed)/", line)]
    assert found == []


_REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:src/migrate|tests|scripts|benchmarks|fixtures|rules)/[\w./-]*\w"
    r"\.(?:py|sh|md|ya?ml|tsv|json|j2|js))\b")


def test_every_file_a_doc_names_exists() -> None:
    """Pages and rule headers that name a module, test or script by its path follow it when it moves."""
    pages = [ROOT / "README.md", *DOCS.glob("*.md"), *(ROOT / "benchmarks").glob("*.md"),
             *(ROOT / "rules").glob("*.yaml")]
    texts = {page: page.read_text(encoding="utf-8") for page in pages}
    texts |= {path: "".join(_leading_comments(path)) for path in DATA.iterdir()}
    missing = sorted(f"{page.relative_to(ROOT)}: {name}" for page, text in texts.items()
                     for name in _REPO_PATH.findall(text) if not (ROOT / name).exists())
    assert missing == []
