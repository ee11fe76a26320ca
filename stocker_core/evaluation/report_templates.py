# ruff: noqa: E501  (template lines are HTML/Markdown text, kept whole)
"""Jinja templates of the evaluation report: a self-contained HTML page and its Markdown twin.

The HTML has inline CSS and inline base64 PNGs only: no URL of any kind, so it opens
from disk with no network request.
"""

SECTIONS = (
    ("answer", "Does anything beat buy-and-hold?"),
    ("looks", "Looks at the test split"),
    ("forward", "Forward record"),
    ("summary", "Summary"),
    ("verdicts", "Verdicts at a glance"),
    ("metrics", "Metrics per policy"),
    ("equity", "Equity curves against buy-and-hold"),
    ("drawdown", "Drawdown curves"),
    ("trades", "Trades on the price"),
    ("rolling", "Rolling windows"),
    ("timing", "Timing test"),
    ("notes", "Definitions and notes"),
)

HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ title }}</title>
<style>
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 12.5px; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
tr.upper td { color: #777; font-style: italic; }
.verdict { margin: 0.2em 0; } .muted { color: #666; font-size: 0.92em; }
.good { color: #176f2c; } .bad { color: #a31515; } .even { color: #555; }
img { max-width: 100%; } nav a { margin-right: 0.8em; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="muted">Generated {{ generated_at }} from the warehouse tables eval.* ({{ warehouse }}).</p>
<nav>{% for id, name in sections %}<a href="#{{ id }}">{{ name }}</a>{% endfor %}</nav>

<h2 id="answer">Does anything beat buy-and-hold?</h2>
<p class="answer"><strong>{{ answer }}</strong></p>
<p>Leaderboard: Δ daily Sharpe against buy-and-hold over the independent test windows, best first.</p>
{{ leaderboard_html }}
<ul>{% for line in evidence %}<li>{{ line }}</li>{% endfor %}</ul>

<h2 id="looks">Looks at the test split</h2>
<p>Every evaluation that played policies on a test split is counted (table eval.test_looks; one Dagster run
is one look). A model looked at more than once may have been tuned on the test split.
{% if flagged_looks %}<span class="bad">{{ flagged_looks }} model version(s) looked at more than once.</span>{% endif %}</p>
{{ looks_html }}

<h2 id="forward">Forward record</h2>
<p>Decisions recorded in the hash-chained ledger before their session's bar existed (stocker ledger), scored
when the bar landed: the next-session return at the recorded exposure after costs, compounded over the days,
equal-weight across tickers; excess is over buy-and-hold on the same tickers and days; the interval is a 95%
t-interval of the daily excess over that many days (none under 2); the minimum detectable edge is the daily
excess a two-sided 5% test detects with 80% power at that many days. Live and replayed (STOCKER_CLOCK) entries
are never mixed; “–”: none of that kind scored yet.</p>
<h3>Live</h3>
{{ forward_live_html }}
<h3>Replayed (simulated clock)</h3>
{{ forward_replayed_html }}

<h2 id="summary">Summary</h2>
<ul>
<li>{{ episode_count }} backtested episodes ({{ episode_policies }} policies each){% if episode_count %},
  first {{ episode_first }}, last {{ episode_last }}{% endif %}; {{ test_episode_count }} lie wholly in a test split.</li>
<li>{{ window_count }} rolling windows of {{ window_days }} trading days, moved {{ step_days }} days at a time
  across the test split.</li>
<li>Policies: {{ policies | join(", ") }}.</li>
</ul>
{{ splits_html }}

<h2 id="verdicts">Verdicts at a glance</h2>
{% for line in verdicts %}<p class="verdict {{ line.css }}">{{ line.text }}</p>
{% else %}<p>No rolling-window comparisons stored yet.</p>{% endfor %}
<p class="muted">{{ overlap_note }}</p>

<h2 id="metrics">Metrics per policy</h2>
<p>Mean over the backtested episodes that lie wholly in a test split ({{ test_episode_count }} episodes):</p>
{{ metrics_test_html }}
<p>Whole test period as one episode, per ticker:</p>
{{ test_period_html }}
<details><summary>Mean over all {{ episode_count }} episodes (in-sample for trained policies)</summary>
{{ metrics_all_html }}</details>

<h2 id="equity">Equity curves against buy-and-hold</h2>
{% for fig in equity_figures %}<p><img alt="{{ fig.alt }}" src="data:image/png;base64,{{ fig.data }}"></p>
<p class="muted">{{ fig.caption }}</p>{% endfor %}

<h2 id="drawdown">Drawdown curves</h2>
{% for fig in drawdown_figures %}<p><img alt="{{ fig.alt }}" src="data:image/png;base64,{{ fig.data }}"></p>{% endfor %}

<h2 id="trades">Trades on the price</h2>
{% for fig in trades_figures %}<p><img alt="{{ fig.alt }}" src="data:image/png;base64,{{ fig.data }}"></p>{% endfor %}

<h2 id="rolling">Rolling windows</h2>
<p>Mean over windows [{{ confidence_pct }}% bootstrap confidence interval]; wins = windows where the
policy's total return beats the baseline's, with the two-sided sign-test p-value.</p>
{{ rolling_html }}
{% for line in clones %}<p class="verdict even">{{ line }}: one policy's numbers, not two results.</p>
{% endfor %}{% for fig in rolling_figures %}<p><img alt="{{ fig.alt }}" src="data:image/png;base64,{{ fig.data }}"></p>{% endfor %}
<details><summary>Every metric, mean [{{ confidence_pct }}% CI]</summary>{{ rolling_full_html }}</details>

<h2 id="timing">Timing test</h2>
<p>The policy's own daily exposures are shuffled across days ({{ shuffles }} seeded shuffles);
the share of shuffles it beats separates timing skill from market exposure
(0.5 = no timing skill; "–" = constant exposure, or a policy that buys once and stays invested, like buy_and_hold,
whose exposure only drifts with the price: nothing to time).</p>
{{ timing_html }}

<h2 id="notes">Definitions and notes</h2>
<ul>{% for line in notes %}<li>{{ line }}</li>{% endfor %}</ul>
</body>
</html>
"""

MARKDOWN_TEMPLATE = """# {{ title }}

Generated {{ generated_at }} from the warehouse tables eval.* ({{ warehouse }}).

## Does anything beat buy-and-hold?

**{{ answer }}**

Leaderboard: Δ daily Sharpe against buy-and-hold over the independent test windows, best first.

{{ leaderboard_md }}

{% for line in evidence %}- {{ line }}
{% endfor %}
## Looks at the test split

Every evaluation that played policies on a test split is counted (table eval.test_looks; one Dagster run is one look). A model looked at more than once may have been tuned on the test split.{% if flagged_looks %} **{{ flagged_looks }} model version(s) looked at more than once.**{% endif %}

{{ looks_md }}

## Forward record

Decisions recorded in the hash-chained ledger before their session's bar existed (stocker ledger), scored when the bar landed: the next-session return at the recorded exposure after costs, compounded over the days, equal-weight across tickers; excess is over buy-and-hold on the same tickers and days; the interval is a 95% t-interval of the daily excess over that many days (none under 2); the minimum detectable edge is the daily excess a two-sided 5% test detects with 80% power at that many days. Live and replayed (STOCKER_CLOCK) entries are never mixed; “–”: none of that kind scored yet.

Live:

{{ forward_live_md }}

Replayed (simulated clock):

{{ forward_replayed_md }}

## Summary

- {{ episode_count }} backtested episodes ({{ episode_policies }} policies each){% if episode_count %}, first {{ episode_first }}, last {{ episode_last }}{% endif %}; {{ test_episode_count }} lie wholly in a test split.
- {{ window_count }} rolling windows of {{ window_days }} trading days, moved {{ step_days }} days at a time across the test split.
- Policies: {{ policies | join(", ") }}.

{{ splits_md }}

## Verdicts at a glance

{% for line in verdicts %}- {{ line.text }}
{% else %}No rolling-window comparisons stored yet.
{% endfor %}
{{ overlap_note }}

## Metrics per policy

Mean over the backtested episodes that lie wholly in a test split ({{ test_episode_count }} episodes):

{{ metrics_test_md }}

Whole test period as one episode, per ticker:

{{ test_period_md }}

Mean over all {{ episode_count }} episodes (in-sample for trained policies):

{{ metrics_all_md }}

## Equity curves against buy-and-hold

{% for fig in equity_figures %}![{{ fig.alt }}]({{ fig.file }})

{{ fig.caption }}

{% endfor %}
## Drawdown curves

{% for fig in drawdown_figures %}![{{ fig.alt }}]({{ fig.file }})

{% endfor %}
## Trades on the price

{% for fig in trades_figures %}![{{ fig.alt }}]({{ fig.file }})

{% endfor %}
## Rolling windows

Mean over windows [{{ confidence_pct }}% bootstrap confidence interval]; wins = windows where the policy's total return beats the baseline's, with the two-sided sign-test p-value.

{{ rolling_md }}

{% for line in clones %}- {{ line }}: one policy's numbers, not two results.
{% endfor %}
{% for fig in rolling_figures %}![{{ fig.alt }}]({{ fig.file }})

{% endfor %}
Every metric, mean [{{ confidence_pct }}% CI]:

{{ rolling_full_md }}

## Timing test

The policy's own daily exposures are shuffled across days ({{ shuffles }} seeded shuffles); the share of shuffles it beats separates timing skill from market exposure (0.5 = no timing skill; "–" = constant exposure, or a policy that buys once and stays invested, like buy_and_hold, whose exposure only drifts with the price: nothing to time).

{{ timing_md }}

## Definitions and notes

{% for line in notes %}- {{ line }}
{% endfor %}"""
