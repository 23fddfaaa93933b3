"""Studies with ``llm`` members: config validation, mixed sampling, PPO through the async engine,
and a whole (tiny) study against a scripted endpoint, down to the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from sim2human.agents.policy import PolicyAgent
from sim2human.cli.app import main
from sim2human.errors import ConfigError
from sim2human.experiments.study.aggregate import aggregate
from sim2human.experiments.study.condition import reference_scripted, run_condition
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.experiments.study.plan import StudyPlan
from sim2human.experiments.study.world import StudyWorld
from sim2human.report.markdown import study_lines, write_markdown
from sim2human.samplers.build import FixedSampler, MixedSampler
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.store.rundir import read_episodes, read_json
from sim2human.testing import FakeOpenAI, Reply, completion
from tiny_study import TINY_LM_AGENT

EXAMPLE = Path(__file__).parents[2] / "examples" / "llm-collapse.yaml"


def tiny(base_url: str, **over: Any) -> dict[str, Any]:
    members = {"members": 1, "endpoint": "fake", "max_tokens": 8}
    raw: dict[str, Any] = {
        "name": "tiny-llm",
        "seeds": [0],
        "train": {"episodes": 24, "batch_episodes": 8, "epochs": 1, "max_turns": 4},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded"],
            "members_per_family": 1,
            "llm": {
                "train": {"families": ["chatty"], "prompts": ["plain"], **members},
                "heldout": {"families": ["noisy-line"], "prompts": ["story"], **members},
            },
        },
        "eval": {"episodes_per_member": 2, "llm_episodes_per_member": 1, "bootstrap": 100},
        "llm": {
            "endpoints": {
                "fake": {
                    "base_url": base_url,
                    "model": "fake",
                    "timeout_s": 5,
                    "max_retries": 1,
                    "backoff_s": 0.01,
                }
            },
            "cache": None,
            "conversations": 4,
        },
        "conditions": [
            {
                "name": "frozen-llm",
                "sampler": "fixed",
                "episodes": 8,
                "simulator": {
                    "family": "standard",
                    "temperature": 0,
                    "llm": {"endpoint": "fake", "judge": "llm", "max_tokens": 8},
                },
            },
            {"name": "mixed", "sampler": "uniform", "llm_share": 0.25},
        ],
    }
    raw.update(over)
    return raw


def caller(n: int, body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    if "How satisfied" in last:
        return Reply(body=completion(str(n % 11)))
    if "(Relevant facts:" in last:
        return Reply(body=completion(last.split("(Relevant facts:")[1].strip(" .)") + "."))
    return Reply(body=completion("Hello."))


def test_example_study_loads_full_and_quick() -> None:
    full, quick = load_study(EXAMPLE), load_study(EXAMPLE, quick=True)
    assert [c.name for c in full.conditions] == [c.name for c in quick.conditions]
    world = StudyWorld.build(quick)
    held = [s for s in world.ensemble.heldout if s.kind == "llm"]
    assert held and world.llm_train and world.endpoints(quick.conditions) == {"local"}
    trained_prompts = {s.llm.prompt for s in world.llm_train if s.llm}
    assert trained_prompts.isdisjoint({s.llm.prompt for s in held if s.llm})
    frozen = world.fixed_spec(quick.conditions[0])
    assert frozen is not None and frozen.kind == "llm" and frozen.traits.temperature == 0


def test_sub_runs_go_one_at_a_time_when_the_model_takes_every_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = StudyPlan.of(load_study(EXAMPLE, quick=True))
    assert plan.endpoints  # the example's llm members play on the embedded model
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert plan.model_takes_every_core()  # threads: 2 in the example
    without = StudyPlan(plan.config, None, frozenset())  # a study without LLM members
    assert not without.model_takes_every_core()
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert not plan.model_takes_every_core()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ensemble": {"train": ["cooperative"], "heldout": ["noisy-line"]}}, "llm_share needs"),
        (
            {"llm": {"endpoints": {"x": {"base_url": "u", "model": "m", "api_key": "sk-1"}}}},
            "unknown key",
        ),
        ({"llm": {"conversations": 0}}, "llm.conversations"),
    ],
)
def test_bad_llm_config_is_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_study(tiny("http://127.0.0.1:9/v1", **change))


def test_shared_prompts_between_train_and_heldout_are_rejected() -> None:
    raw = tiny("http://127.0.0.1:9/v1")
    raw["ensemble"]["llm"]["heldout"]["prompts"] = ["plain"]
    with pytest.raises(ConfigError, match="both train and held-out"):
        parse_study(raw)


def test_mixed_sampler_plays_llm_members_at_its_share() -> None:
    pool = QuirkPool.from_acts(StudyWorld.build(parse_study(tiny("u"))).scenario.acts)
    persona = get_family("cooperative").sample(0, pool)
    llm = get_family("chatty").sample(1, pool)
    for block in (1, 4):
        sampler = MixedSampler(FixedSampler(persona), [llm], 0.2, block)
        rng = np.random.default_rng(0)
        picks = [sampler.next(rng).id == llm.id for _ in range(8000)]
        assert 0.18 < np.mean(picks) < 0.22
        runs = np.diff(np.flatnonzero(np.diff([0, *picks, 0])))[::2]  # lengths of LLM runs
        assert set(runs.tolist()) <= {block * k for k in range(1, 10)}


def test_tiny_llm_study_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789-never-written"
    monkeypatch.setenv("SIM2HUMAN_TEST_KEY", secret)
    # In-process (the runner's worker processes cost more start-up than this whole study).
    with FakeOpenAI(caller) as fake:
        raw = tiny(fake.base_url)
        raw["llm"]["endpoints"]["fake"]["api_key_env"] = "SIM2HUMAN_TEST_KEY"
        cfg = parse_study(raw)
        for c in cfg.conditions:
            run_condition(cfg, c, 0, tmp_path / "conditions" / c.name / "seed-0")
        reference_scripted(cfg, tmp_path / "reference" / "scripted")
    study = aggregate(cfg, tmp_path, 1.0)
    write_markdown(tmp_path / "report.md", study_lines(study))
    frozen, mixed = study.conditions
    assert frozen.episodes_trained == 8 and mixed.episodes_trained == 24
    # Held-out results are split by member kind, with CIs, and LLM health is counted.
    for row in (frozen, mixed, *study.reference):
        assert row.heldout_gold_llm is not None and row.heldout_gold_persona is not None
        assert row.heldout_gold_llm.n == 1 and row.heldout_gold_persona.n == 2
        assert row.llm_errors == 0 and (row.llm_replies or 0) > 0
    assert study.llm_accounting is not None and study.llm_accounting["requests"] > 0
    sub = tmp_path / "conditions" / "frozen-llm" / "seed-0"
    eps = read_episodes(sub / "episodes.jsonl")
    trained = [e for e in eps if e.phase == "train"]
    assert trained and all(e.family == "llm:standard" for e in trained)
    # The LLM judge's 0-10 rating is the proxy the trainer saw.
    assert all(abs(e.proxy * 10 - round(e.proxy * 10)) < 1e-9 for e in trained)
    assert read_json(sub / "summary.json")["llm"]["fake"]["completion_tokens"] > 0
    mixed_eps = read_episodes(tmp_path / "conditions" / "mixed" / "seed-0" / "episodes.jsonl")
    assert any(e.family.startswith("llm:") and e.phase == "eval" for e in mixed_eps)
    report = (tmp_path / "report.md").read_text()
    assert "Held-out persona vs held-out LLM members" in report and "role retries" in report
    # Findings tell conditions apart by role (from the sampler here), whatever they are called.
    assert frozen.role == "frozen" and "Best ensemble condition `mixed`" in report
    # The key went to the endpoint, and nowhere into the run directory.
    assert all(s.headers["authorization"] == f"Bearer {secret}" for s in fake.seen)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_stress_on_a_run_with_llm_heldout_members(tmp_path: Path) -> None:
    """`sim2human stress RUN_DIR` stresses the members it can play (those needing no endpoint)
    with the run's own turn limit, and asks no endpoint for anything."""
    with FakeOpenAI(caller) as fake:
        cfg = parse_study(tiny(fake.base_url))
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
        for c in cfg.conditions:
            sub = tmp_path / "conditions" / c.name / "seed-0"
            sub.mkdir(parents=True)
            PolicyAgent(IntakeScenario(), seed=0).save(sub / "checkpoint.pt")
        out = tmp_path / "stress"
        code = main(
            [
                "stress",
                str(tmp_path),
                "--out",
                str(out),
                "--workers",
                "1",
                "--grid",
                "1",
                "--perturbations",
                "typos",
                "--episodes-per-member",
                "1",
            ]
        )
        assert code == 0 and not fake.seen
    data = read_json(out / "stress.json")
    assert set(data["agents"]) == {"frozen-llm", "mixed", "scripted"}
    assert StudyWorld.build(cfg).max_turns == cfg.train.max_turns == 4


def test_eval_agent_command_on_a_study_ensemble(tmp_path: Path) -> None:
    with FakeOpenAI(caller) as fake:
        study = tmp_path / "study.yaml"
        study.write_text(yaml.safe_dump(tiny(fake.base_url)))
        out = tmp_path / "eval"
        code = main(
            [
                "eval-agent",
                str(study),
                "--base-url",
                fake.base_url,
                "--model",
                "fake",
                "--episodes",
                "2",
                "--out",
                str(out),
            ]
        )
    assert code == 0
    eps = read_episodes(out / "episodes.jsonl")
    assert len(eps) == 4 and {e.split for e in eps} == {"heldout"}  # 1 persona + 1 llm member
    rows = {(r["split"], r["family"]): r for r in read_json(out / "summary.json")["rows"]}
    assert rows[("all", "all")]["gold"]["n"] == 4 and ("heldout", "llm:noisy-line") in rows
    from sim2human.diagnostics.rundir import load_run_dir

    run = load_run_dir(out)  # a finished sub-run: no "did not finish" / "missing" warnings
    assert run.all_problems() == [] and run.conditions["llm-agent"][0].heldout


def test_eval_agent_json_is_the_summary_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(caller) as fake:
        study = tmp_path / "study.yaml"
        study.write_text(yaml.safe_dump(tiny(fake.base_url)))
        out = tmp_path / "eval"
        argv = ["eval-agent", str(study), "--base-url", fake.base_url, "--model", "fake"]
        code = main([*argv, "--episodes", "1", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert captured.err == ""
    assert doc["rows"] == read_json(out / "summary.json")["rows"]
    assert doc["out"] == str(out)


def test_a_language_model_agent_trains_by_grpo_against_a_frozen_llm_caller_that_judges(
    tmp_path: Path,
) -> None:
    """Issue 35's item 6, wired: an ``agent: {kind: lm}`` study whose frozen simulator is an
    LLM that also judges each exchange. GRPO's proxy is that judge's 0-10 rating, its calls are
    the LLM member's, and the agent is still scored on what it submitted."""
    from sim2human.experiments.study.runner import run_study

    with FakeOpenAI(caller) as fake:
        raw = tiny(fake.base_url)
        raw["train"] = {"max_turns": 4}
        raw["agent"] = TINY_LM_AGENT
        raw["conditions"][0].pop("episodes")
        raw["conditions"] = raw["conditions"][:1]
        study = run_study(parse_study(raw), tmp_path, workers=1)
    (row,) = study.conditions
    assert row.gold_rule == "submitted" and row.episodes_trained == 8
    assert row.llm_errors == 0 and (row.llm_replies or 0) > 0
    eps = read_episodes(tmp_path / "conditions" / "frozen-llm" / "seed-0" / "episodes.jsonl")
    trained = [e for e in eps if e.phase == "train"]
    assert trained and all(e.family == "llm:standard" for e in trained)
    assert {e.record_source for e in eps} == {"submitted"}
    assert all(abs(e.proxy * 10 - round(e.proxy * 10)) < 1e-9 for e in trained)
    judged = [s for s in fake.seen if "How satisfied" in json.dumps(s.body)]
    assert judged, "the frozen LLM never judged a call"


def test_the_lm_llm_collapse_design_shares_intake_s_quick_warm_start() -> None:
    """``examples/design/lm-llm-collapse.yaml`` says a quick intake LM study's warm start can be
    copied into its run, and that its frozen caller is the LLM that judges every exchange."""
    from sim2human.experiments.study import lm_condition

    examples = EXAMPLE.parent
    design = load_study(examples / "design" / "lm-llm-collapse.yaml", quick=True)
    base = load_study(examples / "lm-collapse.yaml", quick=True)
    folders = {
        lm_condition.warm_start_dir(Path("ws"), cfg.agent, StudyWorld.build(cfg), 0)  # type: ignore[arg-type]
        for cfg in (design, base)
    }
    assert len(folders) == 1
    frozen = StudyWorld.build(design).fixed_spec(design.conditions[0])
    assert frozen is not None and frozen.kind == "llm" and frozen.traits.temperature == 0
    assert design.conditions[1] == base.conditions[1] and design.eval == base.eval
