"""The viewer's pages in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``).

One browser for the session, on the session's viewer (``support.view_data``). Each test checks
that the browser logged no error meanwhile. Screenshots are kept under the session's temporary
folder (``view-screenshots``), and copied to ``$LITDATA_VIEW_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.view_data import (
    ATTACKS,
    ENCRYPTED,
    GALLERY,
    GALLERY_ITEMS,
    PARQUET,
    S3,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "the browser tests need Debian's chromium and chromium-driver: "
        "apt-get install -y chromium chromium-driver (.ci/run installs them)",
        allow_module_level=True,
    )

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

WAIT = 30


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium, for the whole session."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--disable-gpu",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go."""
    return tmp_path_factory.mktemp("view-screenshots")


def screenshot(browser: Any, shots: Path, name: str) -> None:
    """Save the page as ``name.png`` (and copy it where ``$LITDATA_VIEW_SCREENSHOTS`` says)."""
    path = shots / f"{name}.png"
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    extra = os.environ.get("LITDATA_VIEW_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(extra) / path.name)


@pytest.fixture
def page(browser: Any, viewer: Any) -> Iterator[Any]:
    """The viewer's page, freshly loaded; no browser error may be logged during the test."""
    browser.get(viewer.url)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#summary tr"))
    yield browser
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def wait(browser: Any, condition: Any) -> Any:
    return WebDriverWait(browser, WAIT).until(condition)


def tab(browser: Any, name: str) -> None:
    browser.find_element(By.CSS_SELECTOR, f"#tabs button[data-tab={name}]").click()


def dataset(browser: Any, number: int) -> None:
    Select(browser.find_element(By.ID, "dataset")).select_by_value(str(number))


def indices(browser: Any) -> list[int]:
    """The samples the grid shows now (read in one script: the grid may be redrawn meanwhile)."""
    return browser.execute_script(  # type: ignore[no-any-return]
        "return [...document.querySelectorAll('#grid .sample')].map(c => Number(c.dataset.index))"
    )


def selected(browser: Any) -> str:
    """The index of the highlighted sample."""
    return browser.find_element(By.CSS_SELECTOR, ".sample.selected").get_attribute("data-index")


def grid_shows(browser: Any, expected: list[int]) -> None:
    wait(browser, lambda d: indices(d) == expected)


def test_overview_and_its_chunk_map(page, shots):
    rows = page.find_elements(By.CSS_SELECTOR, "#summary tr")
    assert rows[2].text == f"items {GALLERY_ITEMS}"
    bars = wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".chunk-bar.cached"))
    assert len(bars) == 3
    assert "in place" in page.find_element(By.ID, "cost").text
    screenshot(page, shots, "overview")
    bars[2].click()  # a chunk opens its samples
    grid_shows(page, list(range(80, 120)))


def test_paging_jump_and_key_lookup(page, shots):
    tab(page, "samples")
    grid_shows(page, list(range(50)))
    page.find_element(By.ID, "next").click()
    grid_shows(page, list(range(50, 100)))
    assert page.find_element(By.ID, "page-info").text == f"samples 50\u201399 of {GALLERY_ITEMS}"
    page.find_element(By.ID, "prev").click()
    grid_shows(page, list(range(50)))
    page.find_element(By.ID, "jump").send_keys("117")
    page.find_element(By.ID, "jump-go").click()
    grid_shows(page, list(range(100, 120)))
    assert (
        page.find_element(By.CSS_SELECTOR, ".sample.selected").get_attribute("data-index") == "117"
    )
    page.find_element(By.ID, "key").send_keys("img-0042")
    page.find_element(By.ID, "key-go").click()
    grid_shows(page, list(range(50)))
    assert (
        page.find_element(By.CSS_SELECTOR, ".sample.selected").get_attribute("data-index") == "42"
    )


def decoded_thumbnails(browser: Any) -> list[int] | None:
    """The natural widths of the grid's thumbnails once every one is decoded, else ``None``."""
    widths = browser.execute_script(
        "return [...document.querySelectorAll('#grid img.thumb')]"
        ".map(i => i.complete ? i.naturalWidth : 0)"
    )
    return widths if widths and all(widths) else None


def test_thumbnails_are_really_decoded(page, shots):
    tab(page, "samples")
    grid_shows(page, list(range(50)))
    widths = wait(page, decoded_thumbnails)
    assert len(widths) == 50
    assert widths[:5] == [32, 40, 48, 56, 64]
    heat = page.execute_script(
        "return [...document.querySelectorAll('img.heat')].map(i => i.naturalWidth)"
    )
    assert heat[:2] == [8, 8]
    assert page.find_elements(By.CSS_SELECTOR, "canvas.plot")
    screenshot(page, shots, "samples")
    page.find_element(By.CSS_SELECTOR, "#grid img.thumb").click()  # the full-size view
    wait(
        page,
        lambda d: d.execute_script(
            "const i = document.getElementById('lightbox-img'); return i.complete && i.naturalWidth"
        ),
    )
    page.find_element(By.ID, "lightbox").click()


def test_a_histogram_click_filters_the_grid(page, shots):
    tab(page, "stats")
    wait(page, lambda d: d.find_element(By.ID, "stats-progress").text.startswith("done"))
    screenshot(page, shots, "statistics")
    assert f"over all {GALLERY_ITEMS} samples" in page.find_element(By.ID, "stats-progress").text
    page.find_element(By.CSS_SELECTOR, ".bar[data-field=label][data-bar='2']").click()
    grid_shows(page, list(range(2, GALLERY_ITEMS, 4)))
    assert "label value" in page.find_element(By.ID, "filter-info").text
    page.find_element(By.ID, "filter-clear").click()
    grid_shows(page, list(range(50)))
    tab(page, "stats")
    wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".top-value[data-field=label]"))
    page.find_element(By.CSS_SELECTOR, ".top-value[data-field=label][data-value='1']").click()
    grid_shows(page, list(range(1, GALLERY_ITEMS, 4)))


def test_search_lists_hits_and_opens_one(page):
    tab(page, "search")
    page.find_element(By.ID, "search-q").send_keys("bird")
    page.find_element(By.ID, "search-go").click()
    wait(page, lambda d: "all searched" in d.find_element(By.ID, "search-info").text)
    hits = page.find_elements(By.CSS_SELECTOR, "#search-results .hit")
    assert [int(h.get_attribute("data-index")) for h in hits] == list(range(2, GALLERY_ITEMS, 4))
    assert hits[0].find_element(By.TAG_NAME, "mark").text == "bird"
    hits[-1].click()
    grid_shows(page, list(range(100, 120)))


def test_parquet_s3_and_encrypted_datasets(page, shots):
    tab(page, "samples")
    dataset(page, PARQUET)
    grid_shows(page, list(range(25)))
    assert not page.find_elements(By.CSS_SELECTOR, "#grid .error")
    dataset(page, ENCRYPTED)
    grid_shows(page, list(range(20)))
    texts = [c.text for c in page.find_elements(By.CSS_SELECTOR, ".cell[data-field=secret] .text")]
    assert texts[:2] == ["hidden 0", "hidden 1"]
    dataset(page, S3)
    grid_shows(page, list(range(50)))
    widths = wait(page, decoded_thumbnails)
    assert len(widths) == 50
    assert "request" in page.find_element(By.ID, "cost").text


def test_hostile_strings_are_shown_as_text_and_run_nothing(page):
    tab(page, "samples")
    grid_shows(page, list(range(50)))
    captions = {
        int(card.get_attribute("data-index")): card.find_element(
            By.CSS_SELECTOR, ".cell[data-field=caption] .text"
        ).get_attribute("textContent")
        for card in page.find_elements(By.CSS_SELECTOR, "#grid .sample")
        if int(card.get_attribute("data-index")) in ATTACKS
    }
    assert captions == ATTACKS
    assert page.execute_script("return window.__pwned") is None
    assert len(page.find_elements(By.TAG_NAME, "script")) == 1  # app.js only
    assert page.find_elements(By.CSS_SELECTOR, "#grid a, #grid img[src=x]") == []
    tab(page, "search")
    page.find_element(By.ID, "search-q").send_keys("<script>")
    page.find_element(By.ID, "search-go").click()
    wait(page, lambda d: "all searched" in d.find_element(By.ID, "search-info").text)
    assert page.find_element(By.CSS_SELECTOR, "#search-results mark").text == "<script>"
    assert page.execute_script("return window.__pwned") is None


def test_a_training_step_is_drawn(page):
    tab(page, "step")
    page.find_element(By.ID, "step-n").clear()
    page.find_element(By.ID, "step-n").send_keys("1")
    page.find_element(By.ID, "step-go").click()
    cards = wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#step-result .sample"))
    assert len(cards) == 4
    assert "rank 0, epoch 1, step 1: 4 samples" in page.find_element(By.ID, "step-result").text
    dataset(page, GALLERY)
