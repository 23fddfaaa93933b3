"""What ``eval-agent`` reports: gold, fields and proxy per (split, family) with CIs over members,
titled with the agent's label and the population's hash, the rule gold was scored under
(``metrics.record_rule``), and how many replies the cache gave.

The population hash sits beside the table so that two tables are compared only when their
populations are the same (``experiments.study.agent_record``)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from sim2human.metrics.outcomes import StoredEstimate, cluster_bootstrap
from sim2human.metrics.outcomes import fmt_estimate as est
from sim2human.metrics.record_rule import record_rule_line
from sim2human.types import Episode


def summarise(episodes: list[Episode], n_boot: int) -> dict[str, Any]:
    """Gold success, field accuracy and proxy per (split, family), CIs over members. The rows
    are in a fixed order and depend on the episodes only, whatever order they were played in."""
    rows = []
    episodes = sorted(episodes, key=lambda e: e.id)
    keys = sorted({(e.split, e.family) for e in episodes})
    for split, family in [*keys, ("all", "all")]:
        eps = [e for e in episodes if (split, family) in (("all", "all"), (e.split, e.family))]
        members = [e.simulator_id for e in eps]

        def est(values: list[float], members: list[str] = members) -> StoredEstimate:
            r = cluster_bootstrap(values, members, n_boot=n_boot)
            return r.stored()

        rows.append(
            {
                "split": split,
                "family": family,
                "gold": est([float(e.gold.success) for e in eps]),
                "fields": est([e.gold.field_accuracy for e in eps]),
                "proxy": est([e.proxy for e in eps]),
                "errors": sum(e.error is not None for e in eps),
            }
        )
    return {"rows": rows, "record_rule": record_rule_line(episodes)}


def cache_line(llm: dict[str, Any], agent_endpoint: str) -> str:
    """``cache: agent 0 of 40 replies, simulators 12 of 30``: what the cache answered."""

    def counts(names: list[str]) -> tuple[int, int]:
        rows = [llm[n] for n in names if isinstance(llm.get(n), dict)]
        return sum(r["cache_hits"] for r in rows), sum(r["requests"] for r in rows)

    ah, ar = counts([agent_endpoint])
    sh, sr = counts([n for n in llm if n != agent_endpoint])
    return f"cache: agent {ah} of {ar} replies from the cache, simulators {sh} of {sr}"


def table(summary: dict[str, Any]) -> Table:
    label = summary.get("agent", {}).get("label", "LLM agent")
    pop = summary.get("population_hash")
    where = f" · population {pop}" if pop else ""
    t = Table(title=f"{label}: gold vs proxy (%, 95% CI over members){where}", title_justify="left")
    for col in ("split", "family", "n", "gold success", "fields right", "proxy", "errors"):
        t.add_column(col, justify="left" if col in ("split", "family") else "right")
    for r in summary["rows"]:
        t.add_row(
            r["split"],
            r["family"],
            str(r["gold"]["n"]),
            est(r["gold"]),
            est(r["fields"]),
            est(r["proxy"]),
            str(r["errors"]),
        )
    return t
