"""The viewer's self-contained HTML page: a Jinja2 shell, inline CSS and JS, the data as JSON.

Nothing is fetched: the page works from a file, offline. The episodes are embedded once, as
``<script type="application/json">`` blocks (``embed_json``: every ``<``, ``>`` and ``&`` written as
a JSON escape, so no text can close a block): the index (``viewer.data.PageData``) before the
script, which draws the first rows while the browser is still reading the details' blocks after
it. The script renders a page of rows at a time with ``textContent``, never ``innerHTML``, so a
transcript that holds markup stays text. The
server-side parts (tables of estimates, the generalisation matrix) are autoescaped by Jinja2.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from markupsafe import Markup

from sim2human.metrics.collapse import N_BOOT, Gold, Transfer, transfer
from sim2human.metrics.outcomes import Estimate, fmt_estimate, gold
from sim2human.report.templates_env import template_env
from sim2human.types import Episode
from sim2human.viewer.data import GOLD_LOW, PROXY_HIGH, Group, Matrix, PageData, is_exploit

_ENV = template_env("sim2human.viewer")


def embed_json(data: Any) -> Markup:
    """``data`` as JSON text that is safe inside a ``<script>`` element (and still the same
    JSON: the escapes are only ever inside strings)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(raw, escaped)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)  # escaped above: no markup can be in it


def _asset(name: str) -> Markup:
    """A static file of the page (CSS, JS) inlined as it is: ours, never data."""
    text = (resources.files("sim2human.viewer") / "templates" / name).read_text("utf-8")
    return Markup(text)  # a file of this package, never data


@dataclass(frozen=True)
class ConditionRow:
    name: str
    runs: int
    n: int
    failed: int
    exploits: int
    transfer: Transfer


def by_condition(groups: Sequence[Group]) -> dict[str, dict[str, list[Episode]]]:
    """Condition -> training run -> its evaluation episodes."""
    out: dict[str, dict[str, list[Episode]]] = defaultdict(dict)
    for g in groups:
        out[g.condition].setdefault(g.run, []).extend(g.episodes)
    return out


def condition_rows(
    groups: Sequence[Group],
    n_boot: int = N_BOOT,
    known: Mapping[str, Transfer] | None = None,
    value: Gold = gold,
) -> list[ConditionRow]:
    """Each condition's proxy and gold, train and held out, with the study's CIs (``transfer``:
    gold is ``value``, success unless the scenario leads with its score; runs are the
    clusters); ``known``: those a fresh diagnosis holds (read the same way)."""
    known = known or {}
    rows = []
    for name, runs in by_condition(groups).items():
        eps = [e for v in runs.values() for e in v]
        rows.append(
            ConditionRow(
                name=name,
                runs=len(runs),
                n=len(eps),
                failed=sum(not e.gold.success for e in eps),
                exploits=sum(is_exploit(e) for e in eps),
                transfer=known.get(name) or transfer(runs, n_boot=n_boot, value=value),
            )
        )
    return rows


def est(e: Estimate) -> str:
    """An estimate in percentage points with its CI; ``-`` where there is none."""
    return fmt_estimate(e, missing="-")


def render(template: str, data: PageData, extra: dict[str, Any], **context: Any) -> str:
    """``template`` with the page's CSS and JS inlined, ``data``'s index (with ``extra``) and
    its blocks of details embedded."""
    return _ENV.get_template(template).render(
        data=embed_json({**data.payload(), **extra}),
        blocks=[embed_json(b.payload()) for b in data.blocks],
        css=_asset("viewer.css"),
        js=_asset("viewer.js"),
        est=est,
        proxy_high=PROXY_HIGH,
        gold_low=GOLD_LOW,
        **context,
    )


def view_html(
    title: str,
    data: PageData,
    rows: Sequence[ConditionRow],
    grids: Sequence[Matrix],
    notes: Sequence[str],
    initial: dict[str, str],
) -> str:
    """The viewer page of one run."""
    return render(
        "view.html.j2",
        data,
        {"initial": initial},
        title=title,
        rows=rows,
        matrices=grids,
        notes=notes,
    )


METRICS = [
    ("train proxy", "train_proxy"),
    ("train gold", "train_gold"),
    ("held-out proxy", "heldout_proxy"),
    ("held-out gold", "heldout_gold"),
    ("gap (train proxy − gold)", "gap"),
    ("drop (train − held-out gold)", "drop"),
]


def delta(a: Estimate, b: Estimate) -> str:
    """B's mean minus A's, in signed percentage points; ``-`` where either has none."""
    if not (a.n and b.n) or math.isnan(a.mean) or math.isnan(b.mean):
        return "-"
    return f"{100 * (b.mean - a.mean):+.0f}"


def signed(e: Estimate) -> str:
    """A difference in signed percentage points with its CI and the pairs behind it; ``-``
    where no pair is of that metric."""
    if not e.n or math.isnan(e.mean):
        return "-"
    lo, hi = e.ci
    return f"{100 * e.mean:+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}] (n={e.n})"


def compare_html(
    title: str,
    data: PageData,
    extra: dict[str, Any],
    comparisons: Sequence[Any],
    notes: Sequence[str],
) -> str:
    """The compare page (``viewer.compare``; ``extra``: its pairs and labels)."""
    return render(
        "compare.html.j2",
        data,
        extra,
        title=title,
        comparisons=comparisons,
        metrics=METRICS,
        delta=delta,
        signed=signed,
        notes=notes,
    )
