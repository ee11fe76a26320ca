"""The pages in a real browser: headless Chromium driven by Playwright. Loads each view, plays
task_easy to the end with a policy (keyboard), steps by hand, opens a council day, and checks
that no console error or failed request happened. Screenshots go to ``STOCKER_WEB_SCREENSHOTS``
(default: a temporary folder)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from browser_testing import PageWatch, chromium_path, live_server
from stocker_testing import SEED_DIR
from web_testing import add_agent_run, copy_tiny_home

playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
CHROMIUM = chromium_path()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium"),
]

VIEWS = ["", "episode", "council", "compare", "training", "corpus"]


@pytest.fixture(scope="module")
def site(tmp_path_factory, tiny_template):
    tiny = copy_tiny_home(tiny_template, tmp_path_factory.mktemp("browser") / "home")
    add_agent_run(tiny)
    settings = tiny.settings.model_copy(update={"source": "files", "files_dir": SEED_DIR})
    folder = Path(os.environ.get("STOCKER_WEB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    with live_server(settings) as url, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield url, browser, folder, tiny
        browser.close()


def _page(browser, width=1280, height=800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    watch = PageWatch()
    watch.attach(page)
    return page, watch


@pytest.mark.parametrize("view", VIEWS)
def test_each_view_loads_without_errors(site, view):
    url, browser, folder, _ = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/{view}", wait_until="networkidle")
    assert page.title().startswith("Stocker")
    page.screenshot(path=str(folder / f"{view or 'overview'}.png"), full_page=True)
    assert watch.problems == []


def test_play_task_easy_to_the_end_with_a_policy_by_keyboard(site):
    url, browser, folder, _ = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/episode", wait_until="networkidle")
    page.select_option("#episode-select", "task_easy")
    page.select_option("#policy-select", "buy_and_hold")
    page.click("#start-form button[type=submit]")
    page.wait_for_selector("#price-chart svg")
    page.locator("body").focus()
    page.keyboard.press("Space")  # play
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 43", timeout=30_000)
    assert "done (43 of 43)" in page.inner_text("#account")
    assert page.locator("#price-chart .mark.buy").count() == 1
    page.screenshot(path=str(folder / "episode-played.png"), full_page=True)
    assert watch.problems == []


def test_step_by_hand_and_an_invalid_sell(site):
    url, browser, folder, tiny = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/episode?episode=SYN|2015-03-01", wait_until="networkidle")
    page.wait_for_selector("#price-chart svg")
    page.fill("#quantity", "10")
    page.click("#buy")
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 1")
    page.locator("body").focus()
    page.keyboard.press("h")
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 2")
    page.fill("#quantity", "99")
    page.click("#sell")
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 3")
    assert "✗ invalid" in page.inner_text("#steps-table")
    assert "10 shares" in page.inner_text("#account")
    page.screenshot(path=str(folder / "episode-by-hand.png"), full_page=True)
    assert watch.problems == []


def test_open_a_council_day(site):
    url, browser, folder, tiny = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/council?episode=SYN|2015-03-01", wait_until="networkidle")
    page.wait_for_selector("#votes-table tbody tr")
    assert page.locator("#votes-table tbody tr").count() == 7
    assert page.locator("#day-chart img").count() == 1
    assert page.inner_text("#decision").startswith("BUY 49")
    page.locator("body").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('decision').textContent.startsWith('HOLD')")
    page.screenshot(path=str(folder / "council-day.png"), full_page=True)
    assert watch.problems == []


@pytest.mark.parametrize(
    ("view", "ready"),
    [
        ("episode?episode=SYN|2015-03-01&policy=hold", "#price-chart svg"),
        ("council", "#votes-table tbody tr"),
    ],
)
def test_phone_sized_viewport_has_no_horizontal_scroll(site, view, ready):
    url, browser, folder, _ = site
    page, watch = _page(browser, 390, 844)
    page.goto(f"{url}/web/{view}", wait_until="networkidle")
    page.wait_for_selector(ready)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.screenshot(path=str(folder / f"{view.split('?')[0]}-phone.png"), full_page=True)
    assert watch.problems == []


def test_the_page_asks_for_the_api_key_once(site):
    _, browser, folder, tiny = site
    with live_server(tiny.settings, api_key="s3cret") as url:
        page, watch = _page(browser)
        page.goto(f"{url}/web/", wait_until="domcontentloaded")
        page.wait_for_selector("#key-dialog[open]")
        page.fill("#key-input", "s3cret")
        page.click("#key-form button[value=ok]")
        page.wait_for_selector(".card .count")
        page.goto(f"{url}/web/training", wait_until="networkidle")
        page.wait_for_selector("#runs-table tbody tr")
        assert page.locator("#key-dialog[open]").count() == 0  # kept for the session
        unauthorized = [p for p in watch.problems if p.startswith("401")]
        assert len(unauthorized) == 1 and all(p.startswith("401") or "401" in p for p in watch.problems)


def test_compare_starts_without_the_hindsight_upper_bound(site):
    url, browser, folder, _ = site
    page, watch = _page(browser, width=1400, height=900)
    page.goto(f"{url}/web/compare", wait_until="networkidle")
    page.wait_for_selector("#policy-boxes input")
    checked = page.eval_on_selector_all(
        "#policy-boxes input", "els => els.filter(e => e.checked).map(e => e.value)"
    )
    assert "ideal" not in checked and "buy_and_hold" in checked
    fits = page.eval_on_selector("#metrics-table", "t => t.scrollWidth <= t.parentElement.clientWidth")
    assert fits
    page.screenshot(path=str(folder / "compare-1400.png"), full_page=True)
    assert watch.problems == []


def test_play_the_council_on_task_easy_with_no_stored_votes(site):
    """Issue 41's first screen: Episodes → task_easy → council plays to the end (votes computed)."""
    url, browser, folder, _ = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/episode", wait_until="networkidle")
    page.select_option("#episode-select", "task_easy")
    page.select_option("#policy-select", "council")
    page.click("#start-form button[type=submit]")
    page.wait_for_selector("#price-chart svg")
    page.click("#run-all")
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 43", timeout=30_000)
    assert "done (43 of 43)" in page.inner_text("#account")
    assert "episode over" in page.inner_text("#notice")
    page.screenshot(path=str(folder / "episode-council-task-easy.png"), full_page=True)
    assert watch.problems == []


def test_the_page_closes_its_play_session_when_it_plays_again_and_when_it_leaves(site):
    """Issue 43: loading again and again never reaches the per-client quota (16); leaving closes."""
    url, browser, _, _ = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/episode?episode=SYN|2015-03-01", wait_until="networkidle")
    page.wait_for_selector("#price-chart svg")
    seen = {page.evaluate("view.session")}
    for _ in range(20):
        before = page.evaluate("view.session")
        page.click("#start-form button[type=submit]")
        page.wait_for_function(f"view.session && view.session !== '{before}'")
        seen.add(page.evaluate("view.session"))
    assert len(seen) == 21 and "429" not in page.inner_text("#notice")
    last = page.evaluate("view.session")
    assert httpx.get(f"{url}/web/api/play/{last}").status_code == 200
    page.goto(f"{url}/web/", wait_until="networkidle")  # pagehide: the session is closed
    deadline = time.monotonic() + 10
    while httpx.get(f"{url}/web/api/play/{last}").status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert httpx.get(f"{url}/web/api/play/{last}").status_code == 404
    assert watch.problems == []


def test_an_error_banner_clears_when_a_later_action_succeeds(site):
    """The Training view's banner (a run's image failed) goes once another run is picked; the
    Episodes view's goes with the next step that succeeds."""
    url, browser, folder, _ = site
    page, _ = _page(browser)
    page.route(
        "**/api/training/*/image", lambda route: route.fulfill(status=404, body='{"error": "no image"}')
    )
    page.goto(f"{url}/web/training", wait_until="networkidle")
    page.click("#runs-table button:has-text('moderator_sft')")  # the newest run, the agent's, has no image
    page.wait_for_selector("#notice .notice.error")
    page.click("#runs-table button:has-text('ppo')")
    page.wait_for_selector("#run-detail h2:has-text('ppo')")
    assert page.locator("#notice .notice.error").count() == 0
    page.goto(f"{url}/web/episode?episode=SYN|2015-03-01", wait_until="networkidle")
    page.wait_for_selector("#price-chart svg")
    page.evaluate(
        "view.state.done = false; api(`api/play/${view.session}/step`, {side: 'short'}).catch(showError)"
    )
    page.wait_for_selector("#notice .notice.error")
    page.click("#hold")
    page.wait_for_function("document.querySelectorAll('#steps-table tbody tr').length === 1")
    assert page.locator("#notice .notice.error").count() == 0


FORWARD = {
    "empty": None,
    "modes": {
        "replayed": {
            "sessions": ["2016-03-01", "2016-03-02", "2016-03-03", "2016-03-04", "2016-03-07"],
            "equity": {
                "macd": [0.9991, 0.9987, 1.0012, 1.0031, 1.0024],
                "zmr": [1.0, 1.0004, 0.9998, 1.001, 1.0],
            },
            "benchmark": [1.0002, 0.9995, 1.0008, 1.0015, 1.0011],
        }
    },
    "record": [],
}


def test_the_forward_equity_axis_reads_apart(site):
    """The Forward view's equity stays near 1.0: its y ticks read as distinct changes, not '1.00'."""
    url, browser, folder, _ = site
    page, watch = _page(browser)
    page.route("**/web/api/forward", lambda route: route.fulfill(json=FORWARD))
    page.goto(f"{url}/web/forward", wait_until="networkidle")
    page.wait_for_selector("#forward-replayed-chart svg")
    ticks = page.eval_on_selector_all(
        "#forward-replayed-chart text.tick[text-anchor=end]", "els => els.map(e => e.textContent)"
    )
    assert len(ticks) >= 3 and len(set(ticks)) == len(ticks), ticks
    assert all(t.endswith("%") for t in ticks) and "0.0%" in ticks
    page.screenshot(path=str(folder / "forward.png"), full_page=True)
    assert watch.problems == []


def test_the_training_view_leads_with_the_learning_curve(site):
    """Issue 52: the view opened with three flat charts (held-out answered 1.0, format 1.0, n 60)
    before any learning curve, and its timestamps mixed two formats."""
    url, browser, folder, _ = site
    page, watch = _page(browser)
    page.goto(f"{url}/web/training", wait_until="networkidle")
    page.wait_for_selector("#run-detail figure")
    first = page.locator("#run-detail figure").first
    assert "valid result (mean reward per decision) by step" in first.inner_text()
    assert "kept: step 2" in first.inner_text() and first.locator("circle.kept").count() == 1
    flat = page.inner_text("#run-detail p.constant")
    assert "held-out answered 1 · held-out format 1 · held-out n 60" in flat
    captions = page.locator("#run-detail figcaption").all_inner_texts()
    assert not any(word in caption for caption in captions for word in ("answered", "format", " n "))
    when = page.locator("#runs-table tbody tr td:nth-child(4)").all_inner_texts()
    assert len(when) == 3 and all(len(w) == 19 and w[10] == " " for w in when), when
    page.screenshot(path=str(folder / "training-learning-curve.png"), full_page=True)
    assert watch.problems == []
