"""The report's figures as PNG bytes.

matplotlib's object API (``Figure`` rendered by its Agg canvas) rather than ``pyplot``: no global
figure state, no backend selection, safe in worker processes and headless machines.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sim2human.diagnostics import side_by_side
from sim2human.diagnostics.analyse import ConditionDiagnosis, CurvePoint
from sim2human.metrics.overoptimisation import overopt_curve

WIDTH = 11.0
"""Inches at 100 dpi: 1100 px, which fits a 1280 px window with margins."""
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
"""matplotlib's tab10."""


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def _grid(n: int, height: float = 3.0) -> tuple[Figure, list[Axes]]:
    cols = min(n, 4)
    rows = -(-n // cols)
    fig = Figure(figsize=(WIDTH, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _by_run(points: Sequence[CurvePoint]) -> dict[str, list[CurvePoint]]:
    out: dict[str, list[CurvePoint]] = defaultdict(list)
    for p in points:
        out[p.run].append(p)
    return out


def _xy(points: Sequence[CurvePoint], attr: str) -> tuple[list[int], list[float]]:
    """Training episodes and ``attr`` of the points that have it."""
    keep = [(p.episodes, getattr(p, attr)) for p in points if getattr(p, attr) is not None]
    return [x for x, _ in keep], [float(y) for _, y in keep]


def learning_curves(conditions: Sequence[ConditionDiagnosis]) -> bytes | None:
    """Train proxy (what the trainer sees) and held-out gold (what matters) over training."""
    shown = [c for c in conditions if any(p.train_proxy is not None for p in c.curve)]
    if not shown:
        return None
    fig, axes = _grid(len(shown))
    for ax, c in zip(axes, shown, strict=True):
        for i, (_run, pts) in enumerate(sorted(_by_run(c.curve).items())):
            label = i == 0
            ax.plot(
                *_xy(pts, "train_proxy"),
                color=COLOURS[0],
                lw=1,
                alpha=0.8,
                label="train proxy" if label else None,
            )
            ax.plot(
                *_xy(pts, "train_gold"),
                color=COLOURS[2],
                lw=1,
                alpha=0.5,
                label="train gold" if label else None,
            )
            ax.plot(
                *_xy(pts, "heldout_gold"),
                "o-",
                ms=3,
                color=COLOURS[3],
                lw=1,
                label="held-out gold" if label else None,
            )
        ax.set_title(c.name, fontsize=10)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("training episodes", fontsize=8)
        ax.tick_params(labelsize=8)
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle("Learning curves: train proxy vs held-out gold (success rate)", fontsize=11)
    return _png(fig)


def overoptimisation(conditions: Sequence[ConditionDiagnosis]) -> bytes | None:
    """Held-out gold against d = sqrt(KL(pi || pi_init)), the fitted R(d) and its peak d*."""
    shown = [c for c in conditions if c.eval_points]
    if not shown:
        return None
    fig, axes = _grid(len(shown))
    for ax, c in zip(axes, shown, strict=True):
        d = np.asarray([p.d for p in c.eval_points])
        ax.scatter(
            d,
            [p.gold for p in c.eval_points],
            s=10,
            color=COLOURS[3],
            alpha=0.7,
            label="held-out gold",
        )
        fit = c.overfit
        if fit is not None:
            xs = np.linspace(0, max(fit.d_max, fit.d_star or 0) * 1.05, 200)
            ax.plot(
                xs,
                overopt_curve(fit, xs.tolist()),
                color="black",
                lw=1.2,
                label=f"fit a={fit.alpha:.2f} b={fit.beta:.2f}",
            )
            if fit.d_star is not None and fit.d_star <= xs[-1]:
                ax.axvline(fit.d_star, color="grey", ls="--", lw=1, label=f"d*={fit.d_star:.2f}")
        ax.set_title(c.name, fontsize=10)
        ax.set_xlabel("d = sqrt(KL(pi || pi_init))", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(
        "Overoptimisation: held-out gold (field accuracy) vs optimisation distance", fontsize=11
    )
    return _png(fig)


def family_bars(conditions: Sequence[ConditionDiagnosis]) -> bytes | None:
    """Gold success per simulator family, per condition, with 95% CIs."""
    families = sorted({(g.split, g.name) for c in conditions for g in c.families})
    if not families:
        return None
    fig = Figure(figsize=(WIDTH, 3.6), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(conditions))
    x = np.arange(len(families))
    for i, c in enumerate(conditions):
        rows = {(g.split, g.name): g for g in c.families}
        means = [rows[f].gold if f in rows else np.nan for f in families]
        lo = [rows[f].gold - rows[f].gold_ci[0] if f in rows else 0 for f in families]
        hi = [rows[f].gold_ci[1] - rows[f].gold if f in rows else 0 for f in families]
        ax.bar(
            x + i * width,
            means,
            width,
            yerr=[lo, hi],
            capsize=2,
            label=c.name,
            color=COLOURS[i % len(COLOURS)],
        )
    ax.set_xticks(x + width * (len(conditions) - 1) / 2)
    ax.set_xticklabels([f"{n}\n({s})" for s, n in families], fontsize=8)
    ax.set_ylabel("gold success", fontsize=9)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncol=min(5, len(conditions)))
    ax.set_title(
        "Gold success by simulator family (training-member families marked 'train')", fontsize=11
    )
    return _png(fig)


def behaviour_curves(conditions: Sequence[ConditionDiagnosis]) -> bytes | None:
    """The agent's policy entropy and its top phrasing's share of turns over training."""
    shown = [c for c in conditions if any(p.entropy is not None for p in c.curve)]
    if not shown:
        return None
    fig, axes = _grid(len(shown), height=2.6)
    twins = []
    for ax, c in zip(axes, shown, strict=True):
        twin = ax.twinx()
        twins.append(twin)
        for i, (_run, pts) in enumerate(sorted(_by_run(c.curve).items())):
            ax.plot(
                *_xy(pts, "entropy"),
                color=COLOURS[0],
                lw=1,
                label="policy entropy (nats)" if i == 0 else None,
            )
            twin.plot(
                *_xy(pts, "top_act_share"),
                color=COLOURS[1],
                lw=1,
                label="top phrasing share" if i == 0 else None,
            )
        twin.set_ylim(0, 1)
        ax.set_title(c.name, fontsize=10)
        ax.tick_params(labelsize=8)
        twin.tick_params(labelsize=8)
        ax.set_xlabel("training episodes", fontsize=8)
    handles = [h for a in (axes[0], twins[0]) for h in a.get_legend_handles_labels()[0]]
    axes[0].legend(handles=handles, fontsize=7, loc="center right")
    fig.suptitle(
        "Behaviour over training: entropy (left axis) and top phrasing share (right)", fontsize=11
    )
    return _png(fig)


def all_plots(conditions: Sequence[ConditionDiagnosis], workers: int = 1) -> dict[str, bytes]:
    """Every figure the data supports, by name (a figure without data is left out); drawn side
    by side in up to ``workers`` forked processes (``diagnostics.side_by_side``: the same bytes;
    one for a caller that may share its process, such as the web app)."""
    makers = {
        "learning_curves": learning_curves,
        "overoptimisation": overoptimisation,
        "families": family_bars,
        "behaviour": behaviour_curves,
    }
    drawn = side_by_side.each(lambda make: make(conditions), list(makers.values()), workers)
    return {name: png for name, png in zip(makers, drawn, strict=True) if png is not None}
