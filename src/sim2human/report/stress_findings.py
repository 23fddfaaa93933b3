"""Plain-words findings from stress.json: robustness (the share of clean gold kept) and absolute
AUC (the gold itself, over the severity grid) of each perturbation-trained agent against the
study's first ``frozen`` condition and against its unperturbed counterpart, and the adversarial
search's breaking severities.

Agents are found by the roles stress.json records (``roles``: each condition's ``role``,
``compare_to``, sampler and whether it trained with ``perturb``), never by their names: a
perturbation-trained condition is one with a ``perturb`` block, its counterpart its
``compare_to`` or else the first condition with the same sampler and no ``perturb``.

Every claim is stated from the numbers and said to be unsupported when the 95% CIs overlap.
"""

from __future__ import annotations

from typing import Any

from sim2human.report.format import est, pct


def _pct(x: float | None) -> str:
    return pct(x, missing="n/a")


def fmt(e: dict[str, Any]) -> str:
    return est(e, missing="undefined")


def episodes_per_member(stress: dict[str, Any]) -> str:
    """ "3 episodes per member and point", and the families that played their own count."""
    own = stress.get("episodes_per_family") or {}
    counts = ", ".join(f"{n} per {family} member" for family, n in own.items())
    text = f"{stress['episodes_per_member']} episodes per member and point"
    return f"{text} ({counts})" if counts else text


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
        f"fresh seeds {fmt(c)} (Wilson interval), n={c['n']}: {held}."
    )


def _breaking(s: dict[str, Any] | None) -> float | None:
    """Minimum breaking severity, or None unless a break was found and confirmed."""
    if s is None or s["status"] != "broken" or not s["confirm"]["breaks"]:
        return None
    return float(s["total_severity"])


def _counterpart(name: str, roles: dict[str, Any]) -> str | None:
    """The condition a perturbation-trained one is compared with besides the frozen one."""
    mine = roles[name]
    if mine.get("compare_to"):
        return str(mine["compare_to"])
    return next(
        (n for n, r in roles.items() if r["sampler"] == mine["sampler"] and not r["perturbed"]),
        None,
    )


def findings(stress: dict[str, Any]) -> list[str]:
    agents: dict[str, Any] = stress["agents"]
    searches: dict[str, Any] = stress.get("adversarial", {})
    roles: dict[str, Any] = stress.get("roles") or {}
    out: list[str] = []
    if not roles:
        out.append(
            "- This stress.json records no condition roles (written before they were stored): "
            "rerun `sim2human stress` for the comparisons."
        )
    frozen = next((n for n, r in roles.items() if r["role"] == "frozen"), None)
    robust = [n for n, r in roles.items() if r["perturbed"] and n in agents]
    if roles and not robust:
        out.append("- No condition trained with perturbations (a `perturb` block) in this run.")
    for r in robust:
        others = [frozen, _counterpart(r, roles)]
        for other in dict.fromkeys(o for o in others if o is not None and o != r):
            if other in agents:  # a ratio and a level: robustness alone flatters a weak start
                out.append(compare(r, other, agents))
                out.append(compare(r, other, agents, key="overall_auc"))
    for name, s in searches.items():
        out.append(_search_line(name, s))
    for r in robust:
        if frozen is None or frozen not in searches or r not in searches:
            continue
        fr, rb = _breaking(searches[frozen]), _breaking(searches[r])
        if fr is None:
            out.append(
                f"- Breaking severity `{r}` vs `{frozen}`: not comparable, the search found no "
                f"confirmed breaking mix for `{frozen}` ({searches[frozen]['status']})."
            )
        elif searches[r]["status"] == "unbreakable" or (rb is not None and rb > fr):
            cap = len(stress["perturbations"])
            shown = f"above {cap} (unbroken)" if rb is None else f"{rb:.2f}"
            out.append(
                f"- Minimum breaking severity: `{r}` {shown} > `{frozen}` {fr:.2f} "
                "(one search per agent on its first seed; a search is noisy, see the probes)."
            )
        else:
            shown = "n/a" if rb is None else f"{rb:.2f}"
            out.append(
                f"- Minimum breaking severity: `{r}` {shown} is NOT higher than `{frozen}` "
                f"{fr:.2f}."
            )
    return out
