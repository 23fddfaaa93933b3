"""Folding recorded human calls back into a study: human outcomes as held-out evaluation.

For each agent of a study run with recorded calls, its human gold (and the people's ratings)
sits next to its simulator gold. Across agents, each simulator family is asked how well it
predicts people: the Spearman rank correlation between the family's gold and human gold over
agents (with a bootstrap CI that resamples each agent's calls), and the mean absolute gap. A
family that ranks agents as people do, with a small gap, is one to trust for this population.

Agents are matched by name: the condition names (and ``scripted``) of the run the calls were
made against. Folding calls into a *new* study of the same conditions compares the new agents
with people's verdict on the old ones; ``sim2human human compare RUN_DIR`` folds them into the
very run that was served.
"""

from __future__ import annotations

import stat
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Group
from rich.table import Table

from sim2human import outputs
from sim2human.errors import RunDirError
from sim2human.escape import md
from sim2human.experiments.study.results import ConditionRow, StudyResult, load_study_result
from sim2human.metrics.outcomes import Estimate, StoredEstimate, by, fmt_estimate, summarise
from sim2human.outputs import OutputError
from sim2human.simulators.human import human_spec
from sim2human.store.calls import HUMAN_FAMILY, HumanStore
from sim2human.store.layout import (
    CONFIG,
    CONFIG_YAML,
    EPISODES,
    HUMAN_JSON,
    HUMAN_MD,
    MEMBERS,
    METRICS,
    STUDY_JSON,
    SUMMARY,
    RunLayout,
)
from sim2human.store.rundir import json_text, write_json
from sim2human.types import Episode

N_BOOT = 1000


def export_run(episodes: Sequence[Episode], out: Path) -> int:
    """A run directory of human calls: ``episodes.jsonl`` with every call, and one
    ``conditions/<agent>/human/`` sub-run per agent, as ``report`` and ``diagnose`` read.

    ``out`` is a folder, created if missing; exporting again replaces every file it wrote
    before (each written atomically, ``outputs``), so a log never holds a call twice. A path
    that exists and is not a folder (a file, ``/dev/null``) is refused, as is a sub-folder
    that leads outside ``out`` through a symlink."""
    _export_folder(out)
    outputs.write_text(out / EPISODES, _jsonl(episodes), inside=out)
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        groups[e.condition].append(e)
    for agent, eps in groups.items():
        sub = RunLayout(out).condition(agent) / HUMAN_FAMILY
        outputs.write_text(sub / EPISODES, _jsonl(eps), inside=out)
        outputs.write_text(sub / METRICS, "", inside=out)  # no training happened here
        write_json(
            sub / CONFIG,
            {"study": "human", "condition": {"name": agent}, "seed": 0},
            inside=out,
        )
        specs = {e.simulator_id: human_spec(e.simulator_id.removeprefix("human:")) for e in eps}
        write_json(
            sub / MEMBERS,
            {"trained_on": [], "heldout": [v.model_dump(mode="json") for v in specs.values()]},
            inside=out,
        )
        write_json(
            sub / SUMMARY,
            {
                "condition": agent,
                "seed": 0,
                "episodes_trained": 0,
                "heldout": summarise(eps).model_dump(),
                "heldout_by_family": {
                    k: v.model_dump() for k, v in by(eps, lambda e: e.family).items()
                },
            },
            inside=out,
        )
    return len(episodes)


def _export_folder(out: Path) -> None:
    """Make ``out`` (a folder of its own for the exported calls) or accept it as it is."""
    try:
        st = out.stat()  # a symlink to a folder is the user's own choice of place
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise outputs.describe_os_error(out, err) from None
    if st is None:
        try:
            out.mkdir(parents=True)
        except OSError as err:
            raise outputs.describe_os_error(out, err) from None
    elif not stat.S_ISDIR(st.st_mode):
        raise OutputError(
            f"{out}: exists and is not a folder; --out names the folder to write the calls into "
            "(as a run directory)"
        )
    elif (out / STUDY_JSON).exists() or (out / CONFIG_YAML).exists():
        raise OutputError(f"{out}: holds a study run; export the calls into a folder of their own")


def _jsonl(episodes: Sequence[Episode]) -> str:
    return "".join(e.model_dump_json() + "\n" for e in episodes)


def call_bootstrap(values: Sequence[float], n_boot: int = N_BOOT, seed: int = 0) -> Estimate:
    """``cluster_bootstrap`` where every call is its own cluster (people, not training seeds,
    are the unit), vectorised: the two levels collapse into one resample of calls."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return Estimate(mean=float("nan"), ci=(float("nan"), float("nan")), n=0)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(v.size, size=(n_boot, v.size))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return Estimate(mean=float(v.mean()), ci=(float(lo), float(hi)), n=int(v.size))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Rank correlation with average ranks for ties; None when undefined (n < 3 or constant)."""
    if len(x) < 3:
        return None
    rx, ry = _ranks(np.asarray(x, float)), _ranks(np.asarray(y, float))
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(v: np.ndarray) -> np.ndarray:
    order = v.argsort(kind="stable")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v), dtype=float)
    for value in np.unique(v):
        tied = v == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def _est(e: Estimate) -> StoredEstimate:
    return e.stored()


ALL_HELDOUT = "(all held-out)"
"""The family row that pools every held-out family (each agent's held-out gold)."""


def compare(study: StudyResult, episodes: Sequence[Episode], seed: int = 0) -> dict[str, Any]:
    """Human vs simulator outcomes per agent, and per simulator family across agents."""
    rows = {r.name: r for r in study.all_rows}
    calls: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        calls[e.condition].append(e)
    agents = [a for a in rows if calls.get(a)]
    per_agent = [_agent_row(a, calls[a], rows[a]) for a in agents]
    families = sorted({f for r in per_agent for f in r["sim_gold_by_family"]})
    boot = _boot_human_gold([calls[a] for a in agents], seed)
    return {
        "study": study.study,
        "calls": int(sum(len(calls[a]) for a in agents)),
        "agents": per_agent,
        "families": [_family_row(f, per_agent, boot) for f in [ALL_HELDOUT, *families]],
        "unmatched_agents": sorted(set(calls) - set(rows)),
        "note": "rank correlations need at least 3 agents with calls; CIs resample each "
        "agent's calls (1000 bootstrap draws)",
    }


def _agent_row(agent: str, eps: Sequence[Episode], row: ConditionRow) -> dict[str, Any]:
    """One agent's human outcomes (calls resampled) beside its simulated ones."""
    return {
        "agent": agent,
        "human_gold": _est(call_bootstrap([float(e.gold.success) for e in eps])),
        "human_fields": _est(call_bootstrap([e.gold.field_accuracy for e in eps])),
        "human_rating": _est(call_bootstrap([e.proxy for e in eps])),
        "sim_heldout_gold": _est(row.heldout_gold),
        "sim_gold_by_family": {**row.train_gold_by_family, **row.heldout_gold_by_family},
    }


def _family_row(
    family: str, per_agent: Sequence[dict[str, Any]], boot: Sequence[np.ndarray]
) -> dict[str, Any]:
    """How well one simulator family ranks the agents as people did (Spearman, gap, CIs)."""
    human = np.array([r["human_gold"]["mean"] for r in per_agent])
    everyone = family == ALL_HELDOUT
    have = [i for i, r in enumerate(per_agent) if everyone or family in r["sim_gold_by_family"]]
    sim = np.array(
        [
            per_agent[i]["sim_heldout_gold"]["mean"]
            if everyone
            else per_agent[i]["sim_gold_by_family"][family]
            for i in have
        ]
    )
    draws = agreement_draws((sim, b[have]) for b in boot)
    return {"family": family, "agents": len(have), **agreement(sim, human[have], *draws)}


def agreement_draws(
    draws: Iterable[tuple[np.ndarray, np.ndarray]],
) -> tuple[list[float | None], list[float]]:
    """Spearman and mean absolute gap of each bootstrap draw of (simulator gold, human gold)
    over agents; a draw whose ranks are constant has no Spearman (None)."""
    rhos: list[float | None] = []
    gaps: list[float] = []
    for sim, human in draws:
        rhos.append(spearman(sim.tolist(), human.tolist()))
        gaps.append(float(np.mean(np.abs(sim - human))) if sim.size else float("nan"))
    return rhos, gaps


def agreement(
    sim: np.ndarray, human: np.ndarray, rhos: Sequence[float | None], gaps: Sequence[float]
) -> dict[str, Any]:
    """How well simulator gold predicts human gold across agents: the Spearman rank
    correlation and the mean absolute gap, each with a 95% percentile CI over the draws
    (``agreement_draws``; no Spearman CI from 10 defined draws or fewer)."""
    rho = spearman(sim.tolist(), human.tolist())
    defined = [r for r in rhos if r is not None]
    return {
        "spearman": rho,
        "spearman_ci": percentile_ci(defined) if rho is not None and len(defined) > 10 else None,
        "mean_abs_gap": float(np.mean(np.abs(sim - human))) if sim.size else None,
        "mean_abs_gap_ci": percentile_ci(gaps) if sim.size else None,
    }


def _boot_human_gold(groups: Sequence[Sequence[Episode]], seed: int) -> list[np.ndarray]:
    """N_BOOT draws of every agent's human gold, each agent's calls resampled."""
    rng = np.random.default_rng(seed)
    golds = [np.array([float(e.gold.success) for e in g]) for g in groups]
    draws = [g[rng.integers(g.size, size=(N_BOOT, g.size))].mean(axis=1) for g in golds]
    return list(np.stack(draws, axis=1)) if draws else [np.zeros(0)] * N_BOOT


def percentile_ci(values: Sequence[float]) -> list[float]:
    """The 2.5% and 97.5% quantiles of bootstrap draws."""
    lo, hi = np.quantile(np.asarray(values), [0.025, 0.975])
    return [float(lo), float(hi)]


def fold_in(run_dir: Path, db: Path) -> dict[str, Any]:
    """Compare a finished study run with the calls recorded in ``db``; writes human.json/.md."""
    if not (run_dir / STUDY_JSON).is_file():
        raise RunDirError(f"{run_dir}: no study.json (did the study finish?)")
    store = HumanStore.open_existing(db)
    try:
        episodes = store.episodes()
    finally:
        store.close()
    result = compare(load_study_result(run_dir), episodes)
    result["db"] = str(db)
    outputs.write_all(
        [(run_dir / HUMAN_JSON, json_text(result)), (run_dir / HUMAN_MD, markdown(result))],
        inside=run_dir,
    )
    return result


def _pct(e: dict[str, Any] | None) -> str:
    return fmt_estimate(e, missing="-")


def _num(v: float | None, ci: list[float] | None = None, scale: float = 1.0) -> str:
    if v is None:
        return "n/a"
    text = f"{scale * v:.2f}" if scale == 1 else f"{scale * v:.0f}"
    if ci is not None:
        lo, hi = (scale * c for c in ci)
        text += f" [{lo:.2f}, {hi:.2f}]" if scale == 1 else f" [{lo:.0f}, {hi:.0f}]"
    return text


def agent_rows(result: dict[str, Any]) -> list[list[str]]:
    return [
        [
            r["agent"],
            str(r["human_gold"]["n"]),
            _pct(r["human_gold"]),
            _pct(r["sim_heldout_gold"]),
            _pct(r["human_fields"]),
            _pct(r["human_rating"]),
        ]
        for r in result["agents"]
    ]


def family_rows(result: dict[str, Any]) -> list[list[str]]:
    return [
        [
            f["family"],
            str(f["agents"]),
            _num(f["spearman"], f["spearman_ci"]),
            _num(f["mean_abs_gap"], f["mean_abs_gap_ci"], 100),
        ]
        for f in result["families"]
    ]


AGENT_COLS = (
    "agent",
    "calls",
    "human gold",
    "simulator held-out gold",
    "human fields right",
    "human rating",
)
FAMILY_COLS = ("simulator family", "agents", "Spearman vs human gold", "mean |gap| (points)")


def human_table(result: dict[str, Any]) -> Group:
    a = Table(
        title=f"human calls ({result['calls']}) vs simulators (%, 95% CI)", title_justify="left"
    )
    for col in AGENT_COLS:
        a.add_column(col, justify="left" if col == "agent" else "right")
    for row in agent_rows(result):
        a.add_row(*row)
    f = Table(title="which simulators predict people (across agents)", title_justify="left")
    for col in FAMILY_COLS:
        f.add_column(col, justify="left" if col == "simulator family" else "right")
    for row in family_rows(result):
        f.add_row(*row)
    return Group(a, f)


def markdown(result: dict[str, Any]) -> str:
    def table(cols: Sequence[str], rows: list[list[str]]) -> str:
        """Every cell escaped (``escape.md``): agent and family names come from the calls."""
        head = "| " + " | ".join(map(md, cols)) + " |\n|" + "---|" * len(cols) + "\n"
        return head + "".join("| " + " | ".join(map(md, r)) + " |\n" for r in rows)

    out = [
        f"# Human calls vs simulators ({result['calls']} calls)\n",
        "%, 95% bootstrap CIs over calls.\n",
        table(AGENT_COLS, agent_rows(result)),
        "\n## Which simulators predict people\n",
        table(FAMILY_COLS, family_rows(result)),
        f"\n{md(result['note'])}.\n",
    ]
    if result["unmatched_agents"]:
        names = ", ".join(map(md, result["unmatched_agents"]))
        out.append(f"\nCalls with agents not in this study: {names}.\n")
    return "".join(out)
