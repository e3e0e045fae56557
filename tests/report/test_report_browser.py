"""The reports in a real browser: Debian's headless Chromium driven through its chromedriver (never a downloaded
browser). Screenshots go to $REPRO_ARTIFACTS (default: the test's temp folder)."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import pytest
from report_helpers import FIXTURES, HOSTILE, RUN_ID, SINGLE

from harness._vocabulary import STYLES
from harness.report import build_site, write_run_reports

pytestmark = pytest.mark.browser

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--window-size=1400,2400")
TRAP = ("window.__alerts = []; for (const name of ['alert', 'confirm', 'prompt']) "
        "{ window[name] = (m) => { window.__alerts.push(String(m)); }; }")


class _Handler(http.server.SimpleHTTPRequestHandler):
    # Like GitHub Pages: logs are served as text, not as a download.
    extensions_map: ClassVar[dict[str, str]] = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".log": "text/plain; charset=utf-8"}

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("REPRO_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    shutil.copytree(FIXTURES / "single", root / "runs" / "single")
    shutil.copytree(FIXTURES / "shards", root / "runs" / "shards")
    build_site([root / "runs"], root / "site", now=datetime(2026, 11, 22, 6, tzinfo=UTC))
    return root / "site"


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    thread.join()
    httpd.server_close()  # its listening socket: left open, a ResourceWarning


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed")
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("Debian chromium/chromium-driver not installed (apt-get install chromium chromium-driver)")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TRAP})
    browser.set_page_load_timeout(30)
    yield browser
    browser.quit()


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _computed_rgb(driver, element) -> tuple[int, int, int]:
    value = driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", element)
    return tuple(int(n) for n in re.findall(r"\d+", value)[:3])


def _no_alerts(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    assert driver.execute_script("return window.__alerts") == []
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert  # noqa: B018 - the property raises when no dialog is open


def _check_colours(driver) -> int:
    from selenium.webdriver.common.by import By

    cells = driver.find_elements(By.CSS_SELECTOR, "#matrix td.cell")
    for cell in cells:
        assert _computed_rgb(driver, cell) == _rgb(STYLES[cell.get_attribute("data-verdict")].background)
    return len(cells)


def test_run_report_matrix_details_and_escaping(driver, server, artifacts):
    from selenium.webdriver.common.by import By

    driver.get(f"{server}/runs/{SINGLE.name}/index.html")
    assert _check_colours(driver) == 12
    verdicts = {c.get_attribute("data-verdict") for c in driver.find_elements(By.CSS_SELECTOR, "#matrix td.cell")}
    assert verdicts == {"confirmed", "fix-regressed", "stale-repro", "failed-differently", "infra-error", "skipped"}
    details = driver.find_element(By.ID, "cell-onetrainer-validation-device--cuda-sim")
    assert details.get_property("open") is False
    driver.find_element(By.CSS_SELECTOR, "td[data-case='onetrainer-validation-device'][data-lane='cuda-sim'] a").click()
    assert details.get_property("open") is True
    table = details.find_element(By.CSS_SELECTOR, "table.variants")
    assert table.is_displayed()
    messages = [m.text for m in details.find_elements(By.CSS_SELECTOR, ".exc-message")]
    assert messages and all(HOSTILE in m for m in messages)  # shown as text, not run
    assert HOSTILE in driver.find_element(By.CSS_SELECTOR, "#case-onetrainer-validation-device h3").text
    details.find_element(By.CSS_SELECTOR, "tr.tail[data-variant='buggy'] summary").click()
    assert "<img src=x onerror=alert(3)>" in details.find_element(By.CSS_SELECTOR, "pre.log-tail").text
    assert driver.find_element(By.CSS_SELECTOR, "a[href='#']").text == "alert(2)"  # the javascript: link, inert
    driver.find_element(By.CSS_SELECTOR, "a[href='#']").click()
    _no_alerts(driver)
    driver.execute_script("arguments[0].scrollIntoView()", details)
    driver.save_screenshot(str(artifacts / "run-report-details.png"))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(artifacts / "run-report.png"))


def test_log_links_resolve_and_render_as_text(driver, server):
    from selenium.webdriver.common.by import By

    for run_id in (SINGLE.name, RUN_ID):
        driver.get(f"{server}/runs/{run_id}/index.html")
        links = [a.get_property("href") for a in driver.find_elements(By.CSS_SELECTOR, "a.log")]
        assert links
        for href in links:
            assert href.startswith(server)
            with urllib.request.urlopen(href, timeout=10) as response:
                assert response.status == 200
    driver.get(f"{server}/runs/{SINGLE.name}/logs/onetrainer-validation-device/cuda-sim/buggy.log")
    assert HOSTILE in driver.find_element(By.TAG_NAME, "body").text
    _no_alerts(driver)


def test_site_front_page_and_case_history(driver, server, artifacts):
    from selenium.webdriver.common.by import By

    driver.get(f"{server}/index.html")
    assert _check_colours(driver) == 12
    assert HOSTILE in driver.find_element(By.ID, "attention").text
    driver.save_screenshot(str(artifacts / "site.png"))
    driver.find_element(By.CSS_SELECTOR, "td[data-case='var-resume'][data-lane='cuda-sim'] a").click()
    assert driver.current_url.endswith("/cases/var-resume.html#lane-cuda-sim")
    now = driver.find_element(By.ID, "lane-cuda-sim")
    assert now.get_attribute("data-verdict") == "fix-regressed"
    assert _computed_rgb(driver, now) == _rgb(STYLES["fix-regressed"].background)
    rows = driver.find_elements(By.CSS_SELECTOR, "#history tbody tr")
    assert [r.get_attribute("id") for r in rows] == [f"run-{SINGLE.name}", f"run-{RUN_ID}"]
    rows[1].find_element(By.TAG_NAME, "a").click()
    assert driver.current_url.endswith(f"/runs/{RUN_ID}/index.html")
    assert "gpu-box-1" in driver.find_element(By.TAG_NAME, "header").text
    _no_alerts(driver)
    driver.get(f"{server}/cases/var-resume.html")
    driver.save_screenshot(str(artifacts / "case.png"))


def test_run_report_works_from_a_file(driver, site):
    from selenium.webdriver.common.by import By

    driver.get((site / "runs" / SINGLE.name / "index.html").as_uri())
    assert _check_colours(driver) == 12
    driver.find_element(By.CSS_SELECTOR, "td[data-case='var-resume'][data-lane='cuda-sim'] a").click()
    assert driver.find_element(By.ID, "cell-var-resume--cuda-sim").get_property("open") is True
    driver.find_element(By.CSS_SELECTOR, "button[data-toggle-all='open']").click()
    assert all(d.get_property("open") for d in driver.find_elements(By.CSS_SELECTOR, "details.lane"))
    _no_alerts(driver)


_LAYOUT = """
const view = document.documentElement.clientWidth;
const out = {page: document.documentElement.scrollWidth, view: view, loose: [], boxes: 0, scrolled: 0};
for (const table of document.querySelectorAll('table')) {
  const box = table.closest('.scroll');
  if (box) {
    out.boxes += 1;
    if (box.getBoundingClientRect().right > view + 0.5) { out.loose.push('box of ' + (table.id || table.className)); }
    if (box.scrollWidth > box.clientWidth) { out.scrolled += 1; }
  } else if (table.getBoundingClientRect().right > view + 0.5) {
    out.loose.push(table.id || table.className);
  }
}
for (const legend of document.querySelectorAll('ul.legend, header, footer')) {
  if (legend.getBoundingClientRect().right > view + 0.5) { out.loose.push(legend.tagName + '.' + legend.className); }
}
return out;
"""


@pytest.mark.parametrize("width", [390, 1400])
@pytest.mark.parametrize("page", [f"runs/{SINGLE.name}/index.html", f"runs/{RUN_ID}/index.html",
                                  "cases/var-resume.html", "index.html"])
def test_pages_fit_the_screen_and_wide_tables_scroll_in_their_own_box(driver, server, artifacts, page, width):
    driver.set_window_size(width, 900)
    try:
        driver.get(f"{server}/{page}")
        driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        layout = driver.execute_script(_LAYOUT)
        assert layout["page"] <= layout["view"], layout  # the page itself never scrolls sideways
        assert layout["loose"] == [], layout  # every table fits, or scrolls inside a box that fits
        assert layout["boxes"] > 0
        name = page.replace("/", "-").removesuffix(".html")
        driver.save_screenshot(str(artifacts / f"{name}-{width}px.png"))
    finally:
        driver.set_window_size(1400, 2400)


def test_long_unbroken_words_in_headings_wrap_instead_of_widening_the_page(driver, tmp_path):
    """Titles quote code (`load_from_checkpoint(map_location='cuda')`) and ids run to 64 characters: a case
    heading holding such a word must wrap at 390 px, not widen the page."""
    long_id = "a-case-id-of-the-longest-allowed-length-made-of-words-" + "x" * 10
    run = tmp_path / SINGLE.name
    shutil.copytree(SINGLE, run)
    results = json.loads((run / "results.json").read_text().replace('"lycoris-extract-diff"', f'"{long_id}"'))
    results["cases"][long_id]["title"] = "Trainer.load_from_checkpoint(map_location='cuda')_returns_the_model_on_the_cpu"
    (run / "results.json").write_text(json.dumps(results))
    write_run_reports(run, results)
    driver.set_window_size(390, 900)
    try:
        driver.get((run / "index.html").as_uri())
        driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        layout = driver.execute_script(_LAYOUT)
        assert layout["page"] <= layout["view"], layout
    finally:
        driver.set_window_size(1400, 2400)


def _shown(driver) -> tuple[list[str], list[str]]:
    """(case ids, library headings) the matrix shows now."""
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "#matrix tbody tr")
    cases = [r.find_element(By.CSS_SELECTOR, "th[scope='row'] a").text for r in rows
             if r.is_displayed() and "group" not in (r.get_attribute("class") or "")]
    headings = [r.text for r in rows if r.is_displayed() and "group" in (r.get_attribute("class") or "")]
    return cases, headings


def _verdicts_by_case(driver) -> dict[str, set[str]]:
    from selenium.webdriver.common.by import By

    table: dict[str, set[str]] = {}
    for cell in driver.find_elements(By.CSS_SELECTOR, "#matrix td.cell[data-case]"):
        table.setdefault(cell.get_attribute("data-case"), set()).add(cell.get_attribute("data-verdict"))
    return table


@pytest.mark.parametrize("page", [f"runs/{SINGLE.name}/index.html", "index.html"])
def test_matrix_filter_by_text_library_and_verdict(driver, server, artifacts, page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    driver.get(f"{server}/{page}")
    form = driver.find_element(By.ID, "matrix-filter")
    assert form.is_displayed()  # the script shows it; without scripts it stays hidden
    first = driver.execute_script("return arguments[0].compareDocumentPosition(document.querySelector("
                                  "'ul.attention')) & Node.DOCUMENT_POSITION_PRECEDING", form)
    assert first  # what needs attention still comes before the matrix and its filter
    everything, headings = _shown(driver)
    verdicts = _verdicts_by_case(driver)
    assert len(everything) == 4 and len(headings) == 4
    assert form.find_element(By.TAG_NAME, "output").text == "4 cases"

    search = form.find_element(By.NAME, "text")
    search.send_keys("LyCORIS")  # the library's name, any case
    assert _shown(driver) == (["lycoris-extract-diff"], ["KohakuBlueleaf/LyCORIS"])
    assert form.find_element(By.TAG_NAME, "output").text == "1 of 4 cases"
    search.send_keys(Keys.ENTER)  # no form submission: the page stays
    assert driver.current_url == f"{server}/{page}"
    search.clear()
    search.send_keys("device-placement")  # a tag
    assert _shown(driver) == (["lycoris-extract-diff"], ["KohakuBlueleaf/LyCORIS"])
    search.clear()
    search.send_keys("checkpoint zzz")  # matches nothing: every heading goes too
    assert _shown(driver) == ([], [])
    search.clear()
    search.send_keys(" ")  # an input event with an empty filter: all back
    assert _shown(driver)[0] == everything

    Select(form.find_element(By.NAME, "library")).select_by_value("pytorch/pytorch")
    assert _shown(driver) == (["var-resume"], ["pytorch/pytorch"])
    Select(form.find_element(By.NAME, "library")).select_by_value("")

    verdict = Select(form.find_element(By.NAME, "verdict"))
    verdict.select_by_value("fix-regressed")
    assert _shown(driver)[0] == [c for c in everything if "fix-regressed" in verdicts[c]] != []
    verdict.select_by_value("attention")
    ok = {"confirmed", "skipped", "missing"}
    attention = [c for c in everything if verdicts[c] - ok]
    assert _shown(driver)[0] == attention and 0 < len(attention) < len(everything)
    driver.save_screenshot(str(artifacts / f"filter-{page.replace('/', '-').removesuffix('.html')}.png"))
    search.send_keys("var")  # filters combine
    assert _shown(driver)[0] == [c for c in attention if "var" in c]
    _no_alerts(driver)
