"""The HTML of each view: one shared layout (navigation, key dialog, notices) around a small
view-specific skeleton that the view's script fills from the JSON API. No external URL:
styles and scripts are served from ``static/`` beside this module, links are relative."""

from __future__ import annotations

from html import escape

from stocker_core.env.tasks import TASKS

PAGES: dict[str, str] = {
    "": "overview",
    "episode": "episode",
    "council": "council",
    "compare": "compare",
    "forward": "forward",
    "training": "training",
    "corpus": "corpus",
}
"""URL path (under the web prefix) -> view name."""

TITLES = {
    "overview": "Overview",
    "episode": "Episodes",
    "council": "Council",
    "compare": "Compare",
    "forward": "Forward",
    "training": "Training",
    "corpus": "Corpus",
}

_TASK_KEY = next(iter(TASKS.values())).key
_EPISODE_PICKER = f"""
<label>Episode <select id="episode-select" name="episode"></select></label>
<label>or key <input id="episode-key" name="key" placeholder="{escape(_TASK_KEY)}" size="16"
  pattern="[A-Z0-9.^=\\-]{{1,15}}\\|\\d{{4}}-\\d{{2}}-01" title="TICKER|YYYY-MM-01"></label>"""
"""The key field's placeholder is a reference task's key (its data ships with the package); the
page replaces it with a key of the home's own data (``api/choices``' ``example_key``)."""

BODIES = {
    "overview": """
<h1>Stocker</h1>
<p>What the warehouse holds, and where to look at it. Every view reads the warehouse read-only.</p>
<div id="cards" class="cards" aria-live="polite"></div>""",
    "episode": f"""
<h1>Play an episode</h1>
<form id="start-form" class="toolbar" aria-label="Episode and policy">{_EPISODE_PICKER}
<label>Policy <select id="policy-select" name="policy"><option value="">by hand</option></select></label>
<label>Seed <input id="seed" name="seed" type="number" min="0" value="1" size="4"></label>
<button type="submit">Load</button>
</form>
<section id="play" hidden>
<p id="episode-summary" class="summary"></p>
<div class="grid2">
<figure><figcaption>Price with trades (▲ B buy, ▼ S sell);
shaded band: days the ideal path is long</figcaption>
<div id="price-chart" class="chart"></div></figure>
<figure><figcaption>Portfolio value (solid) vs buy-and-hold (dashed) and the ideal path (dotted)</figcaption>
<div id="value-chart" class="chart"></div></figure>
</div>
<div class="grid2">
<section aria-labelledby="account-title"><h2 id="account-title">Account</h2>
<dl id="account" class="account"></dl></section>
<section aria-labelledby="act-title"><h2 id="act-title">Act</h2>
<div class="toolbar" role="group" aria-label="Trade by hand">
<label>Quantity <input id="quantity" type="number" min="0" value="10" size="6"></label>
<button type="button" id="max-buy" title="most shares the cash buys">max buy</button>
<button type="button" id="max-sell" title="the whole position">max sell</button>
<button type="button" id="buy" aria-keyshortcuts="b">Buy <kbd>b</kbd></button>
<button type="button" id="sell" aria-keyshortcuts="s">Sell <kbd>s</kbd></button>
<button type="button" id="hold" aria-keyshortcuts="h">Hold <kbd>h</kbd></button>
</div>
<div class="toolbar" role="group" aria-label="Let the policy play">
<button type="button" id="policy-step" aria-keyshortcuts="n">Policy step <kbd>n</kbd></button>
<button type="button" id="play-pause" aria-keyshortcuts="Space">Play <kbd>space</kbd></button>
<button type="button" id="run-all">Play to the end</button>
<button type="button" id="restart" aria-keyshortcuts="r">Restart <kbd>r</kbd></button>
</div>
<h3>Reward terms of the last step</h3>
<table id="terms" class="compact"></table>
</section>
</div>
<h2>Steps</h2>
<div class="scroll"><table id="steps-table"></table></div>
</section>""",
    "council": f"""
<h1>The council</h1>
<form id="council-form" class="toolbar" aria-label="Episode and votes">{_EPISODE_PICKER}
<label>Votes <select id="vote-set" name="votes"></select></label>
<button type="submit">Load</button>
</form>
<p id="council-summary" class="summary"></p>
<section id="council-view" hidden>
<h2>Votes by role × day</h2>
<p class="hint">Cell: sign of the signal (+ buy, − sell, · neutral), shade: confidence. Pick a day
in the list or click a column; <kbd>←</kbd> <kbd>→</kbd> move one day.</p>
<div id="heatmap" class="chart wide"></div>
<div class="toolbar">
<button type="button" id="prev-day" aria-label="previous day">←</button>
<label>Day <select id="day-select"></select></label>
<button type="button" id="next-day" aria-label="next day">→</button>
</div>
<div class="grid2">
<figure><figcaption id="chart-caption">Chart of the day</figcaption>
<div id="day-chart" class="png"></div></figure>
<section aria-labelledby="votes-title"><h2 id="votes-title">Seven votes</h2>
<div class="scroll"><table id="votes-table"></table></div>
<h2>Moderator</h2><p id="decision" class="decision"></p></section>
</div>
</section>""",
    "compare": """
<h1>Compare policies</h1>
<section aria-labelledby="ep-title"><h2 id="ep-title">One episode</h2>
<form id="compare-form" class="toolbar"><label>Backtest <select id="backtest-select"></select></label></form>
<p id="compare-empty" class="empty" hidden></p>
<fieldset id="policy-boxes" class="boxes"><legend>Policies on the chart</legend></fieldset>
<figure><figcaption>Equity curves (value after each day's close; step 0 is the starting cash)</figcaption>
<div id="equity-chart" class="chart wide"></div></figure>
<div class="scroll"><table id="metrics-table"></table></div>
<ul id="episode-clones" class="hint"></ul>
</section>
<section aria-labelledby="rolling-title"><h2 id="rolling-title">Rolling windows of the test split</h2>
<p id="rolling-note" class="hint"></p>
<div class="scroll"><table id="rolling-table"></table></div>
<ul id="rolling-clones" class="hint"></ul>
</section>
<section aria-labelledby="reports-title"><h2 id="reports-title">Reports</h2>
<ul id="reports"></ul></section>""",
    "forward": """
<h1>Forward record</h1>
<p class="hint">Each policy's decisions from the hash-chained ledger, recorded before the session they
decide for had a bar, then scored: equity from 1.0 over the scored sessions (equal weight across tickers,
after costs), buy-and-hold dashed. Live and replayed (simulated clock) entries are never mixed.</p>
<p id="forward-empty" class="empty" hidden></p>
<div id="forward-modes"></div>""",
    "training": """
<h1>Training</h1>
<p id="training-empty" class="empty" hidden></p>
<div class="scroll"><table id="runs-table"></table></div>
<section id="run-detail" hidden aria-live="polite"></section>""",
    "corpus": """
<h1>Corpus</h1>
<p id="dagster" class="hint"></p>
<p id="corpus-empty" class="empty" hidden></p>
<div class="scroll"><table id="tickers-table"></table></div>
<div id="months"></div>""",
}

KEY_DIALOG = """
<dialog id="key-dialog" aria-labelledby="key-title">
<form method="dialog" id="key-form">
<h2 id="key-title">API key</h2>
<p>This server asks for its API key. It is kept for this browser session only.</p>
<label>Key <input id="key-input" type="password" autocomplete="off" required></label>
<div class="toolbar"><button value="ok">Use key</button>
<button value="cancel" formnovalidate>Cancel</button></div>
</form>
</dialog>"""


def _nav(view: str) -> str:
    links = []
    for path, name in PAGES.items():
        href = path or "./"
        current = ' aria-current="page"' if name == view else ""
        links.append(f'<a href="{href}"{current}>{escape(TITLES[name])}</a>')
    return "\n".join(links)


def render_page(view: str) -> str:
    """The full HTML of ``view`` (one of ``PAGES``' values)."""
    title = TITLES[view]
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stocker · {escape(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="static/style.css">
</head>
<body data-view="{view}">
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">Stocker</span>
<nav aria-label="Views">
{_nav(view)}
</nav></header>
<main id="main" tabindex="-1">
<div id="notice" role="status" aria-live="polite"></div>
{BODIES[view]}
</main>
{KEY_DIALOG}
<script src="static/common.js" defer></script>
<script src="static/charts.js" defer></script>
<script src="static/{view}.js" defer></script>
</body>
</html>
"""
