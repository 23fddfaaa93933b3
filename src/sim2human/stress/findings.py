"""Plain-words findings from stress.json: robustness of the perturbation-trained agents against
``frozen-small`` and their plain counterparts, and the adversarial search's breaking severities.

Every claim is stated from the numbers and said to be unsupported when the 95% CIs overlap.
"""

from __future__ import annotations

from typing import Any

PERTURB_MARK = "+perturb"
FROZEN = "frozen-small"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}"


def fmt(est: dict[str, Any]) -> str:
    lo, hi = est["ci"]
    if est["mean"] is None:
        return "undefined"
    return f"{_pct(est['mean'])} [{_pct(lo)}, {_pct(hi)}]"


def compare(a: str, b: str, agents: dict[str, Any], key: str = "overall") -> str:
    """One sentence comparing ``agents[a][key]`` with ``agents[b][key]``."""
    ea, eb = agents[a][key], agents[b][key]
    what = "overall robustness" if key == "overall" else "overall absolute AUC (gold success)"
    if ea["mean"] is None or eb["mean"] is None:
        nobody = b if eb["mean"] is None else a
        return (
            f"- {what}: `{a}` {fmt(ea)} vs `{b}` {fmt(eb)}: undefined for `{nobody}` "
            "(its clean held-out gold success is 0, so there is nothing to lose)."
        )
    if None in ea["ci"] or None in eb["ci"]:
        verdict = "no CI available: not a supported difference"
    elif ea["ci"][0] > eb["ci"][1]:
        verdict = "higher, the 95% CIs do not overlap"
    elif ea["ci"][1] < eb["ci"][0]:
        verdict = "LOWER, the 95% CIs do not overlap"
    else:
        verdict = "the 95% CIs overlap: not a supported difference"
    weak = [n for n in (a, b) if key == "overall" and agents[n]["clean"]["ci"][0] <= 0.0]
    caveat = "".join(
        f" Caution: `{n}`'s clean gold success {fmt(agents[n]['clean'])} is not distinguishable "
        "from 0, so its ratio to it is not meaningful."
        for n in weak
    )
    return f"- {what}: `{a}` {fmt(ea)} vs `{b}` {fmt(eb)}: {verdict}.{caveat}"


def _search_line(name: str, s: dict[str, Any]) -> str:
    if s["status"] == "nothing-to-break":
        return f"- `{name}`: no breaking mix to find: its clean gold success is already 0."
    if s["status"] == "untestable":
        return (
            f"- `{name}`: clean gold success {_pct(s['clean'])} is too low for the search's "
            "episode budget to show a drop: not searched."
        )
    if s["status"] == "unbreakable":
        return (
            f"- `{name}`: not broken even with every perturbation at severity 1 "
            f"(clean {_pct(s['clean'])}, target < {_pct(s['target'])})."
        )
    c = s["confirm"]
    held = "confirmed" if c["breaks"] else "NOT confirmed on fresh seeds (the break may be noise)"
    return (
        f"- `{name}`: cheapest breaking mix found has total severity {s['total_severity']:.2f} "
        f"({', '.join(f'{k} {v:g}' for k, v in s['mix'].items())}); gold success "
        f"{_pct(s['clean'])} clean -> {_pct(s['success'])} (target < {_pct(s['target'])}); on "
        f"fresh seeds {_pct(c['mean'])} (Wilson [{_pct(c['ci'][0])}, {_pct(c['ci'][1])}]), "
        f"n={c['n']}: "
        f"{held}."
    )


def _breaking(s: dict[str, Any] | None) -> float | None:
    """Minimum breaking severity, or None unless a break was found and confirmed."""
    if s is None or s["status"] != "broken" or not s["confirm"]["breaks"]:
        return None
    return float(s["total_severity"])


def findings(stress: dict[str, Any]) -> list[str]:
    agents: dict[str, Any] = stress["agents"]
    searches: dict[str, Any] = stress.get("adversarial", {})
    out: list[str] = []
    robust = [n for n in agents if n.endswith(PERTURB_MARK)]
    if not robust:
        out.append("- No condition trained with perturbations (`...+perturb`) in this run.")
    for r in robust:
        plain = r.removesuffix(PERTURB_MARK)
        for other in (FROZEN, plain):
            if other in agents:
                out.append(compare(r, other, agents))
                if any(agents[n]["clean"]["ci"][0] <= 0.0 for n in (r, other)):
                    out.append(compare(r, other, agents, key="overall_auc"))
    for name, s in searches.items():
        out.append(_search_line(name, s))
    for r in robust:
        if FROZEN not in searches or r not in searches:
            continue
        fr, rb = _breaking(searches[FROZEN]), _breaking(searches[r])
        if fr is None:
            out.append(
                f"- Breaking severity `{r}` vs `{FROZEN}`: not comparable, the search found no "
                f"confirmed breaking mix for `{FROZEN}` ({searches[FROZEN]['status']})."
            )
        elif searches[r]["status"] == "unbreakable" or (rb is not None and rb > fr):
            cap = len(stress["perturbations"])
            shown = f"above {cap} (unbroken)" if rb is None else f"{rb:.2f}"
            out.append(
                f"- Minimum breaking severity: `{r}` {shown} > `{FROZEN}` {fr:.2f} "
                "(one search per agent on its first seed; a search is noisy, see the probes)."
            )
        else:
            shown = "n/a" if rb is None else f"{rb:.2f}"
            out.append(
                f"- Minimum breaking severity: `{r}` {shown} is NOT higher than `{FROZEN}` "
                f"{fr:.2f}."
            )
    return out
