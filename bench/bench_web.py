"""The web page in a real browser (headless Chromium through Playwright): first paint of the
episode view on a warm server, and the stepping round trip.

Run: ``python bench/bench_web.py [--loads 10]`` (needs ``pip install playwright`` and the
Debian ``chromium`` package; no browser download). Builds the web tests' tiny warehouse in a
temporary folder and plays ``task_easy`` from the seed fixture.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "web")]

from browser_testing import chromium_path, live_server  # noqa: E402
from stocker_testing import SEED_DIR  # noqa: E402
from web_testing import build_tiny_home  # noqa: E402

FIRST_PAINT = """() => {
  const paint = performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint');
  return { fcp: paint ? paint.startTime : null, charts: performance.now() };
}"""
STEPS = """async (n) => {
  const full = [];
  for (let i = 0; i < n && !view.state.done; i++) {
    const t = performance.now();
    await step(null);
    full.push(performance.now() - t);
  }
  return { api: window.stockerTimings.steps, full };
}"""


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    median = statistics.median(ordered)
    return f"median {median:6.1f} ms  p95 {p95:6.1f} ms  max {ordered[-1]:6.1f} ms (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10, help="page loads per episode")
    args = parser.parse_args()
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("no chromium: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        tiny = build_tiny_home(Path(tmp) / "home")
        settings = tiny.settings.model_copy(update={"source": "files", "files_dir": SEED_DIR})
        with live_server(settings) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for episode in ("task_easy", "SYN|2015-03-01"):
                page_url = f"{url}/web/episode?episode={episode}&policy=buy_and_hold"
                warm = browser.new_page(viewport={"width": 1280, "height": 800})
                warm.goto(page_url)
                warm.wait_for_selector("#price-chart svg")
                warm.close()
                fcp, charts = [], []
                for _ in range(args.loads):
                    page = browser.new_page(viewport={"width": 1280, "height": 800})
                    page.goto(page_url)
                    page.wait_for_selector("#price-chart svg")
                    timing = page.evaluate(FIRST_PAINT)
                    fcp.append(timing["fcp"])
                    charts.append(timing["charts"])
                    page.close()
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(page_url)
                page.wait_for_selector("#price-chart svg")
                steps = page.evaluate(STEPS, 100)
                page.close()
                print(f"{episode}:")
                print(f"  first contentful paint          {_summary(fcp)}")
                print(f"  episode view with both charts   {_summary(charts)}")
                print(f"  step round trip (fetch + JSON)  {_summary(steps['api'])}")
                print(f"  step incl. re-render            {_summary(steps['full'])}")
            browser.close()


if __name__ == "__main__":
    main()
