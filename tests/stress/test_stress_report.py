"""stress.html and findings from a hand-made stress.json: claims follow the CIs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sim2human.report.stress import write_stress_html
from sim2human.report.stress_findings import findings
from sim2human.report.stress_markdown import write_stress_markdown


def est(mean: float | None, lo: float | None = None, hi: float | None = None) -> dict[str, Any]:
    return {"mean": mean, "ci": [lo, hi]}


def agent(
    overall: dict[str, Any],
    auc: dict[str, Any],
    clean: tuple[float, float, float] = (0.5, 0.4, 0.6),
) -> dict[str, Any]:
    curve = [{"severity": s, "mean": 0.5, "ci": [0.4, 0.6], "n": 10} for s in (0.0, 1.0)]
    return {
        "seeds": [0],
        "clean": {"mean": clean[0], "ci": list(clean[1:]), "n": 10},
        "overall": overall,
        "per_perturbation": {"typos": overall},
        "overall_auc": auc,
        "auc": {"typos": auc},
        "curves": {"typos": curve},
    }


ROLES = {
    "frozen-small": {"role": "frozen", "compare_to": None, "sampler": "fixed", "perturbed": False},
    "ens": {"role": "candidate", "compare_to": None, "sampler": "randomized", "perturbed": False},
    "ens+perturb": {
        "role": "candidate",
        "compare_to": None,
        "sampler": "randomized",
        "perturbed": True,
    },
    "e+perturb": {"role": "candidate", "compare_to": None, "sampler": "plr", "perturbed": True},
}


def stress(
    agents: dict[str, Any],
    adversarial: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "roles": roles if roles is not None else {n: r for n, r in ROLES.items() if n in agents},
        "study": "t",
        "perturbations": ["typos"],
        "grid": [0.0, 1.0],
        "episodes_per_member": 1,
        "agents": agents,
        "adversarial": adversarial or {},
    }


def broken(total: float, confirmed: bool = True) -> dict[str, Any]:
    """A search result that broke the agent with ``typos`` at ``total``."""
    turn = {"speaker": "user", "text": "<script>x</script>"}
    return {
        "status": "broken",
        "clean": 0.8,
        "target": 0.4,
        "mix": {"typos": total},
        "total_severity": total,
        "success": 0.1,
        "episodes": 10,
        "probes": [],
        "confirm": {"mean": 0.1, "ci": [0.0, 0.3], "n": 10, "breaks": confirmed},
        "failing": [
            {"simulator": "m", "termination": "hung_up", "fields_wrong": ["dob"], "turns": [turn]}
        ],
    }


def test_separated_cis_are_a_finding_overlapping_ones_are_not() -> None:
    s = stress(
        {
            "frozen-small": agent(est(0.3, 0.2, 0.4), est(0.1, 0.0, 0.2)),
            "ens": agent(est(0.6, 0.35, 0.8), est(0.2, 0.1, 0.3)),
            "ens+perturb": agent(est(0.9, 0.8, 1.0), est(0.3, 0.2, 0.4)),
        }
    )
    lines = findings(s)
    assert any("`frozen-small`" in x and "do not overlap" in x for x in lines)
    assert any("`ens`" in x and "overlap: not a supported difference" in x for x in lines)


def test_robustness_comes_with_the_absolute_level() -> None:
    """A weak start keeps a large share of little: the findings say both."""
    s = stress(
        {
            "ens": agent(est(0.8, 0.75, 0.85), est(0.6, 0.55, 0.65), clean=(0.75, 0.7, 0.8)),
            "ens+perturb": agent(est(0.95, 0.9, 1.0), est(0.3, 0.25, 0.35), clean=(0.3, 0.2, 0.4)),
        },
        roles={n: ROLES[n] for n in ("ens", "ens+perturb")},
    )
    lines = findings(s)
    assert any(
        "overall robustness" in x and "higher, the 95% CIs do not overlap" in x for x in lines
    )
    assert any("absolute AUC" in x and "LOWER, the 95% CIs do not overlap" in x for x in lines)


def test_undefined_robustness_falls_back_to_absolute_auc() -> None:
    s = stress(
        {
            "frozen-small": agent(est(None), est(0.0, 0.0, 0.0), clean=(0.0, 0.0, 0.0)),
            "ens+perturb": agent(est(0.9, 0.8, 1.0), est(0.3, 0.2, 0.4)),
        }
    )
    lines = findings(s)
    assert any("undefined for `frozen-small`" in x for x in lines)
    assert any("absolute AUC" in x and "do not overlap" in x for x in lines)


def test_a_ratio_to_a_clean_success_near_zero_is_flagged() -> None:
    s = stress(
        {
            "frozen-small": agent(est(0.3, 0.2, 0.4), est(0.1, 0.0, 0.2)),
            "ens+perturb": agent(
                est(1.4, 0.4, 1.9), est(0.02, 0.01, 0.03), clean=(0.01, 0.0, 0.05)
            ),
        }
    )
    lines = findings(s)
    assert any("Caution: `ens+perturb`'s clean gold success" in x for x in lines)
    assert any("absolute AUC" in x for x in lines)


def test_search_comparison_needs_confirmed_breaks() -> None:
    agents = {
        "frozen-small": agent(est(0.5, 0.4, 0.6), est(0.3, 0.2, 0.4)),
        "e+perturb": agent(est(0.5, 0.4, 0.6), est(0.3, 0.2, 0.4)),
    }
    ok = findings(
        stress(agents, {"frozen-small": broken(0.2, True), "e+perturb": broken(0.9, True)})
    )
    assert any("`e+perturb` 0.90 > `frozen-small` 0.20" in x for x in ok)
    worse = findings(
        stress(agents, {"frozen-small": broken(0.5, True), "e+perturb": broken(0.3, True)})
    )
    assert any("is NOT higher" in x for x in worse)
    unconfirmed = findings(
        stress(agents, {"frozen-small": broken(0.2, False), "e+perturb": broken(0.9, True)})
    )
    assert any("not comparable" in x for x in unconfirmed)


def test_html_escapes_transcripts(tmp_path: Path) -> None:
    s = stress({"a": agent(est(0.5, 0.4, 0.6), est(0.3, 0.2, 0.4))}, {"a": broken(0.3)})
    html = write_stress_html(s, tmp_path).read_text()
    assert "<script>x" not in html and "&lt;script&gt;x" in html
    assert "typos 0.3" in html and (tmp_path / "stress-plots" / "typos.png").exists()


def test_markdown_has_every_agent_row_the_findings_and_the_search(tmp_path: Path) -> None:
    s = stress(
        {
            "frozen-small": agent(est(None), est(0.0, 0.0, 0.0), clean=(0.0, 0.0, 0.0)),
            "ens|perturb": agent(est(0.9, 0.8, 1.0), est(0.3, 0.2, 0.4), clean=(0.7, 0.6, 0.8)),
        },
        {"ens|perturb": broken(0.35)},
        roles={},
    )
    s["heldout_families"] = ["noisy-line", "aci-heldout"]
    text = write_stress_markdown(s, tmp_path).read_text()
    assert (tmp_path / "stress.md").exists()
    assert "the `noisy-line`, `aci-heldout` members" in text
    assert "| frozen-small | 1 | 0 [0, 0] | undefined | 0 [0, 0] | undefined |" in text
    # a pipe in a name is escaped, so the row keeps its columns
    assert "| ens\\|perturb | 1 | 70 [60, 80] | 90 [80, 100] | 30 [20, 40] | 90 [80, 100] |" in text
    assert "records no condition roles" in text  # the findings, word for word
    assert "| ens\\|perturb | broken | 80 | < 40 | 0.35 | 10 | 10 [0, 30] |" in text
    assert "<script>" not in text  # transcripts stay in stress.html


def test_agents_are_found_by_role_not_by_name() -> None:
    """Names that say nothing: the frozen one and the counterpart come from the roles."""
    roles = {
        "a": {"role": "frozen", "compare_to": None, "sampler": "fixed", "perturbed": False},
        "b": {"role": "baseline", "compare_to": None, "sampler": "uniform", "perturbed": False},
        "c": {"role": "candidate", "compare_to": None, "sampler": "randomized", "perturbed": False},
        "d": {"role": "candidate", "compare_to": "b", "sampler": "randomized", "perturbed": True},
    }
    agents = {n: agent(est(0.3, 0.2, 0.4), est(0.1, 0.0, 0.2)) for n in "abc"}
    agents["d"] = agent(est(0.9, 0.8, 1.0), est(0.3, 0.2, 0.4))
    lines = findings(stress(agents, roles=roles))
    assert any("`d`" in x and "vs `a`" in x for x in lines)  # the frozen condition
    assert any("`d`" in x and "vs `b`" in x for x in lines)  # its compare_to
    assert not any("vs `c`" in x for x in lines)  # compare_to wins over the same sampler
    del roles["d"]["compare_to"]
    roles["d"]["compare_to"] = None
    lines = findings(stress(agents, roles=roles))
    assert any("`d`" in x and "vs `c`" in x for x in lines)  # same sampler, no perturb


def test_a_stress_json_without_roles_says_so() -> None:
    s = stress({"x": agent(est(0.3, 0.2, 0.4), est(0.1, 0.0, 0.2))}, roles={})
    assert "records no condition roles" in findings(s)[0]


def test_markdown_escapes_markup_in_names(tmp_path: Path) -> None:
    bad = "<script>x|y&"
    s = stress({bad: agent(est(0.5, 0.4, 0.6), est(0.3, 0.2, 0.4))}, {bad: broken(0.3)}, {})
    s["study"], s["heldout_families"] = "<b>study", ["<i>family"]
    text = write_stress_markdown(s, tmp_path).read_text()
    assert "<script" not in text and "<b>" not in text and "<i>" not in text
    assert "| &lt;script&gt;x\\|y&amp; | 1 | 50 [40, 60] |" in text  # one cell, escaped
    assert "# Stress test of study &lt;b&gt;study" in text


def test_stress_reports_replace_links_and_refuse_a_linked_plot_folder(tmp_path: Path) -> None:
    from sim2human.outputs import OutputError
    from sim2human.report.stress import write_stress_reports

    s = stress({"a": agent(est(0.5, 0.4, 0.6), est(0.3, 0.2, 0.4))})
    out, outside = tmp_path / "run", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (tmp_path / "victim").write_text("precious")
    for name in ("stress.html", "stress.md"):
        (out / name).symlink_to(tmp_path / "victim")
    write_stress_reports(s, out)
    assert (tmp_path / "victim").read_text() == "precious"
    assert not (out / "stress.html").is_symlink() and not (out / "stress.md").is_symlink()
    shutil.rmtree(out / "stress-plots")
    (out / "stress-plots").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="leads outside"):
        write_stress_reports(s, out)
    assert list(outside.iterdir()) == []
