"""The fleet report in a real headless Chromium (issue 23): sorting, filtering, links to each repository's own
report, and nothing from a repository injected."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from migrate.fleet import report
from migrate.fleet.model import Outcome, TargetEffort

from conftest import open_page
from test_fleet_report import fleet

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("chromium")]  # each test drives a real headless Chromium
HOSTILE = "<img src=x onerror=alert(1)>\x1b[31m"


def names(driver) -> list[str]:  # type: ignore[no-untyped-def]
    rows = driver.find_elements("css selector", "#fleet-table tbody tr")
    return [r.find_element("css selector", "td.name").text.split("\n")[0] for r in rows if r.is_displayed()]


def sort_by(driver, column: str) -> None:  # type: ignore[no-untyped-def]
    driver.find_element("css selector", f'th[data-sort="{column}"] button').click()


def outcomes() -> list[Outcome]:
    ptx, ported, trt, gone = fleet()
    hostile = replace(ptx, key="f" * 16, name=HOSTILE, identity=f"/repos/{HOSTILE}", slug="hostile-ffffffff",
                      verdict="moderate", low=1.0, high=2.0, targets=(TargetEffort("gfx942", "moderate", 30, 1.0, 2.0, 1),))
    return [ptx, ported, trt, gone, hostile]


def test_the_table_sorts_by_each_column(browser, tmp_path: Path) -> None:  # noqa: F811
    driver = open_page(browser, report.render_html(outcomes()), tmp_path / "fleet.html")
    shown = HOSTILE.replace("\x1b", "\\x1b")
    assert names(driver) == ["ptx-lab", "ported", "trt-serving", "gone", shown]  # the sources' order
    sort_by(driver, "effort-gfx942")
    assert names(driver) == ["gone", "ported", shown, "ptx-lab", "trt-serving"]
    assert driver.find_element("css selector", 'th[data-sort="effort-gfx942"]').get_attribute("aria-sort") == "ascending"
    sort_by(driver, "effort-gfx942")
    assert names(driver) == ["trt-serving", "ptx-lab", shown, "ported", "gone"]
    sort_by(driver, "verdict")
    assert names(driver) == ["gone", "ported", shown, "ptx-lab", "trt-serving"]  # by verdict rank, not by name
    sort_by(driver, "rocm")
    sort_by(driver, "rocm")
    assert names(driver)[0] == "ported"  # supported first, descending
    sort_by(driver, "name")
    assert names(driver) == sorted(names(driver), key=str.lower)


def test_the_table_filters_by_verdict_rocm_status_status_and_text(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.support.ui import Select

    driver = open_page(browser, report.render_html(outcomes()), tmp_path / "fleet.html")
    shown = driver.find_element("id", "shown")
    Select(driver.find_element("id", "filter-verdict")).select_by_value("hard")
    assert names(driver) == ["ptx-lab"] and shown.text == "1"
    Select(driver.find_element("id", "filter-verdict")).select_by_value("")
    Select(driver.find_element("id", "filter-rocm")).select_by_value("supported")
    assert names(driver) == ["ported"]
    Select(driver.find_element("id", "filter-rocm")).select_by_value("")
    Select(driver.find_element("id", "filter-status")).select_by_value("failed")
    assert names(driver) == ["gone"] and shown.text == "1"
    Select(driver.find_element("id", "filter-status")).select_by_value("")
    driver.find_element("id", "search").send_keys("tensorrt")
    assert names(driver) == [] and shown.text == "0"  # the table shows top blockers by title, not families
    driver.find_element("id", "search").clear()
    driver.find_element("id", "search").send_keys("inline ptx")
    assert names(driver) == ["ptx-lab", "trt-serving", HOSTILE.replace("\x1b", "\\x1b")] and shown.text == "3"


def test_families_link_to_each_repositorys_own_report(browser, tmp_path: Path) -> None:  # noqa: F811
    ported = fleet()[1]
    own = tmp_path / report.report_path(ported)
    own.parent.mkdir(parents=True)
    own.write_text("<!DOCTYPE html><title>own report</title><h1 id=own>ported</h1>")
    driver = open_page(browser, report.render_html(outcomes()), tmp_path / "fleet.html")
    family = driver.find_element("css selector", '[data-family="library:flash-attn"]')
    assert family.find_element("css selector", ".count").text == "3"
    family.find_element("link text", "ported").click()
    assert driver.find_element("id", "own").text == "ported" and driver.current_url == own.as_uri()


def test_nothing_from_a_repository_runs_and_the_page_draws(browser, tmp_path: Path) -> None:  # noqa: F811
    from selenium.common.exceptions import NoAlertPresentException

    driver = open_page(browser, report.render_html(outcomes()), tmp_path / "fleet.html")
    assert driver.execute_script("return document.scripts.length") == 1
    assert driver.find_elements("css selector", "img") == []
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    bars = driver.find_elements("css selector", "#chart-effort rect")
    assert len(bars) == 2 * 4  # a range and a bar for each audited repository with effort
    driver.save_screenshot(str(tmp_path / "fleet.png"))
    assert (tmp_path / "fleet.png").stat().st_size > 10_000


def test_the_pages_policy_runs_its_own_script_alone(browser, tmp_path: Path) -> None:  # noqa: F811
    """Were an inline script ever smuggled into the page, the Content-Security-Policy (the page's script by its
    hash, no 'unsafe-inline') would not run it; the page's own script still sorts."""
    page = report.render_html(outcomes()).replace("</body>", "<script>document.title = 'smuggled';</script></body>")
    driver = open_page(browser, page, tmp_path / "fleet.html")
    assert driver.title.startswith("ROCm fleet audit")
    sort_by(driver, "findings")
    assert driver.find_element("css selector", 'th[data-sort="findings"]').get_attribute("aria-sort") == "ascending"
