"""The dashboard in a real browser: Debian's headless Chromium driven by Selenium through the local
chromedriver (nothing is downloaded: Selenium Manager is never asked). Every page of a database
filled by the demo and weeks of history loads without console errors; a screenshot of each is
written to a temporary folder; the DOM has plots with data points, the search returns hits, and
a pin made through the pages changes the memory. ``.ci/run`` installs chromium when missing."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from harness_memory import MemoryStore, Settings
from harness_memory.dashboard import build_app
from test_dashboard import PAGES, XSS, Server, history_db  # noqa: F401 - the session fixture

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    # a missing browser is a failure, not a skip: CI installs Debian's chromium and chromium-driver
    assert Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file(), (
        "the browser tests need Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)"
    )
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    def never(*_a, **_k):  # Selenium Manager would download a driver: it must never be asked
        raise AssertionError("Selenium Manager was asked for a driver")

    original = SeleniumManager.binary_paths
    SeleniumManager.binary_paths = never
    profile = tempfile.mkdtemp(prefix="hm-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        SeleniumManager.binary_paths = original
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site(history_db, tmp_path_factory):  # noqa: F811 - the fixture imported above
    src, counts = history_db
    path = tmp_path_factory.mktemp("browser") / "dash.db"
    shutil.copy(src, path)
    with Server(build_app(path, Settings())) as base:
        yield base, path, counts


def heading(driver, text: str) -> None:
    """Wait (at most 20 s) until the page's h1 holds ``text``: a click's navigation has finished."""
    WebDriverWait(driver, 20).until(ec.text_to_be_present_in_element((By.TAG_NAME, "h1"), text))


def console_errors(driver) -> list[dict]:
    return [x for x in driver.get_log("browser") if x["level"] in ("SEVERE", "ERROR")]


def no_alert(driver) -> bool:
    try:
        _ = driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def test_every_page_loads_cleanly_with_plots_and_a_screenshot(browser, site, tmp_path):
    base, _path, counts = site
    shots = tmp_path / "screenshots"
    shots.mkdir()
    for p in PAGES + [f"/dashboard/memories/{counts['hostile']}"]:
        browser.get(base + p)
        assert browser.find_element(By.TAG_NAME, "h1").text
        assert console_errors(browser) == [], p
        assert no_alert(browser) and browser.execute_script("return window.__xss === undefined"), p
        assert (
            browser.execute_script(  # the stylesheet applied (served by the package, no network)
                "return getComputedStyle(document.querySelector('header')).display"
            )
            == "flex"
        )
        name = re.sub(r"\W+", "_", p.strip("/")) or "overview"
        assert browser.save_screenshot(str(shots / f"{name}.png"))
        assert (shots / f"{name}.png").stat().st_size > 10_000
    browser.get(base + "/dashboard/")
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart.line")
    assert len(charts) >= 3
    for ch in charts:
        points = ch.find_elements(By.CSS_SELECTOR, ".pt")
        assert len(points) >= 4
        assert all(p.is_displayed() for p in points[:3])
        box = ch.rect
        assert box["width"] > 300 and box["height"] > 100  # drawn at a readable size
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart.bars rect.pt")) >= 8
    browser.get(base + "/dashboard/techniques")
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart.intervals circle.pt")) >= 3
    browser.get(base + "/dashboard/maintenance")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart.bars rect.pt")


def test_search_returns_hits_with_score_bars(browser, site):
    base, _path, _counts = site
    browser.get(base + "/dashboard/memories")
    box = browser.find_element(By.NAME, "q")
    box.send_keys("install the missing package")
    browser.find_element(By.CSS_SELECTOR, "select[name=agent] option[value='build-agent']").click()
    box.send_keys(Keys.ENTER)
    WebDriverWait(browser, 20).until(ec.presence_of_element_located((By.CSS_SELECTOR, "svg.scorebar")))
    rows = browser.find_elements(By.CSS_SELECTOR, "table.memories tbody tr")
    assert len(rows) >= 3 and "nothing yet" not in rows[0].text
    bars = browser.find_elements(By.CSS_SELECTOR, "svg.scorebar rect.pt")
    assert bars and {b.get_attribute("data-part") for b in bars} >= {"keyword", "vector"}
    assert console_errors(browser) == []


def test_pin_through_the_pages_changes_the_memory(browser, site):
    base, path, counts = site
    mid = counts["hostile"]
    with MemoryStore(path) as s:
        assert not s.get(mid).pinned
    browser.get(f"{base}/dashboard/memories/{mid}")
    browser.find_element(By.LINK_TEXT, "Pin").click()
    heading(browser, "Pin memory")  # the confirmation
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    heading(browser, f"Memory #{mid}")
    assert browser.find_element(By.CSS_SELECTOR, ".notice").text == "Pinned."
    assert browser.find_element(By.LINK_TEXT, "Unpin")
    with MemoryStore(path) as s:
        assert s.get(mid).pinned
    assert console_errors(browser) == [] and no_alert(browser)
    assert browser.execute_script("return window.__xss === undefined")
    assert XSS in browser.find_element(By.CSS_SELECTOR, "blockquote.content").text  # shown as text


def test_keyboard_navigation_and_dark_theme(browser, site):
    base, _path, _counts = site
    browser.get(base + "/dashboard/")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    active = browser.switch_to.active_element
    assert active.text == "Skip to content"
    active.send_keys(Keys.TAB)
    active = browser.switch_to.active_element
    assert active.text == "Overview"
    active.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # Techniques, by keyboard
    heading(browser, "Techniques")
    light = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    try:
        dark = browser.execute_script("return getComputedStyle(document.documentElement).backgroundColor")
        assert dark != light and dark == "rgb(15, 18, 22)"
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_the_token_link_opens_a_session_in_the_browser(browser, history_db, tmp_path):  # noqa: F811
    src, _counts = history_db
    path = tmp_path / "tok.db"
    shutil.copy(src, path)
    with Server(build_app(path, Settings(api_token="br-token"))) as base:
        browser.get(base + "/dashboard/errors")
        assert "Sign in" in browser.find_element(By.TAG_NAME, "h1").text
        browser.get(base + "/dashboard/errors?token=br-token")
        assert browser.current_url == base + "/dashboard/errors"  # the token left the address
        assert browser.find_element(By.TAG_NAME, "h1").text == "Errors"
        browser.get(base + "/dashboard/maintenance")  # the session cookie carries on
        assert browser.find_element(By.TAG_NAME, "h1").text == "Maintenance"
        assert "br-token" not in browser.page_source
        browser.delete_all_cookies()
