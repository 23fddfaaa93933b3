"""`sim2human stress RUN_DIR`: a tiny study run on disk, stress.json's shape, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sim2human.agents.policy import PolicyAgent
from sim2human.cli.app import main
from sim2human.experiments.study.config import parse_study
from sim2human.scenarios.intake.scenario import IntakeScenario

STUDY = {
    "name": "tiny",
    "seeds": [0, 1],
    "ensemble": {"train": ["cooperative"], "heldout": ["terse-guarded"], "members_per_family": 2},
    "conditions": [
        {
            "name": "frozen-small",
            "sampler": "fixed",
            "simulator": {"family": "standard", "seed": 1, "capacity": 0.1, "temperature": 0},
        },
        {"name": "ens+perturb", "sampler": "uniform", "perturb": {"typos": [0, 0.5]}},
    ],
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study run as `study` leaves it, with untrained checkpoints (stress reads only these)."""
    root = tmp_path_factory.mktemp("run")
    cfg = parse_study(STUDY)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    for c in cfg.conditions:
        for seed in cfg.seeds:
            sub = root / "conditions" / c.name / f"seed-{seed}"
            sub.mkdir(parents=True)
            PolicyAgent(IntakeScenario(), seed=seed).save(sub / "checkpoint.pt")
    return root


def stress(run_dir: Path, out: Path, *extra: str) -> int:
    return main(["stress", str(run_dir), "--out", str(out), "--workers", "1", *extra])


def test_stress_writes_json_html_and_plots(run_dir: Path, tmp_path: Path) -> None:
    code = stress(
        run_dir,
        tmp_path,
        "--grid",
        "0.5,1",
        "--perturbations",
        "silence,typos",
        "--episodes-per-member",
        "1",
        "--no-search",
    )
    assert code == 0
    data = json.loads((tmp_path / "stress.json").read_text())
    assert set(data["agents"]) == {"frozen-small", "ens+perturb", "scripted"}
    assert data["grid"] == [0.0, 0.5, 1.0] and data["perturbations"] == ["silence", "typos"]
    for a in data["agents"].values():
        assert set(a["overall"]) == {"mean", "ci"} and len(a["overall"]["ci"]) == 2
        assert set(a["per_perturbation"]) == {"silence", "typos"}
        for est in a["per_perturbation"].values():
            assert set(est) == {"mean", "ci"}
    assert data["agents"]["frozen-small"]["seeds"] == [0, 1]
    assert data["agents"]["scripted"]["seeds"] == [0]
    scripted = data["agents"]["scripted"]["curves"]["silence"]
    assert scripted[0]["mean"] > 0 and scripted[-1]["mean"] == 0.0  # silent callers: no intake
    assert data["roles"]["ens+perturb"]["perturbed"] and data["adversarial"] == {}
    assert data["roles"]["frozen-small"]["role"] == "frozen"
    html = (tmp_path / "stress.html").read_text()
    assert "`ens+perturb`" in html and "overall absolute AUC" in html  # findings, by role
    assert "stress-plots/silence.png" in html and "scripted" in html
    assert (tmp_path / "stress-plots" / "typos.png").stat().st_size > 1000
    assert "| ens+perturb | 2 |" in (tmp_path / "stress.md").read_text()
    assert not (run_dir / "stress.json").exists()  # --out respected


def test_stress_with_search_on_a_subset(run_dir: Path, tmp_path: Path) -> None:
    code = stress(
        run_dir,
        tmp_path,
        "--grid",
        "1",
        "--perturbations",
        "silence",
        "--episodes-per-member",
        "1",
        "--conditions",
        "scripted",
    )
    assert code == 0
    data = json.loads((tmp_path / "stress.json").read_text())
    assert list(data["agents"]) == ["scripted"]
    s = data["adversarial"]["scripted"]
    assert s["status"] in {"broken", "unconfirmed", "unbreakable", "nothing-to-break", "untestable"}
    if s["status"] == "broken":
        assert set(s["mix"]) == {"silence"} and s["failing"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--perturbations", "typos,acr"], "unknown perturbation 'acr'"),
        (["--grid", "0,1.5"], "1.5 is outside [0, 1]"),
        (["--grid", "0,-0.1"], "-0.1 is outside [0, 1]"),
        (["--grid", ""], "--grid is empty"),
        (["--grid", "0,half"], "--grid: 'half' is not a number"),
        (["--conditions", "nope"], "no condition 'nope'"),
        (["--threshold", "2"], "threshold must be in (0, 1]"),
        (["--search-on", "both"], "--search-on must be 'heldout' or 'train'"),
    ],
)
def test_bad_input_exits_2_naming_it(
    run_dir: Path, tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert stress(run_dir, tmp_path, *args) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err


def test_bad_run_dirs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert stress(tmp_path / "missing", tmp_path) == 2
    assert "no such run directory" in " ".join(capsys.readouterr().err.split())
    assert stress(tmp_path, tmp_path) == 2
    assert "not a study run directory" in " ".join(capsys.readouterr().err.split())
    cfg = parse_study(STUDY)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    assert stress(tmp_path, tmp_path) == 2
    assert "checkpoint.pt: missing" in " ".join(capsys.readouterr().err.split())


FAST = ("--grid", "1", "--perturbations", "typos", "--episodes-per-member", "1", "--no-search")


def _numbers(out: Path) -> dict[str, object]:
    data = json.loads((out / "stress.json").read_text())
    return {k: v for k, v in data.items() if k != "wall_seconds"}


def test_units_on_the_local_executor_give_the_numbers_of_one_process(
    run_dir: Path, tmp_path: Path
) -> None:
    """Two workers (the executor seam: one unit per agent) and one (in this process): the same
    stress.json, agents in the same order whichever finishes first."""
    assert stress(run_dir, tmp_path / "one", *FAST) == 0
    code = main(["stress", str(run_dir), "--out", str(tmp_path / "two"), "--workers", "2", *FAST])
    assert code == 0
    assert _numbers(tmp_path / "two") == _numbers(tmp_path / "one")
    assert list(_numbers(tmp_path / "two")["agents"]) == ["frozen-small", "ens+perturb", "scripted"]


def test_a_search_in_a_unit_of_its_own_gives_the_numbers_of_one_process(
    run_dir: Path, tmp_path: Path
) -> None:
    """On two workers an agent's sweep and its search are two units; merged, they are what one
    process writes: each agent's curves and its search, in the agents' order."""
    some = ("--grid", "1", "--perturbations", "silence", "--episodes-per-member", "1")
    picked = ("--conditions", "frozen-small,scripted")
    assert stress(run_dir, tmp_path / "one", *some, *picked) == 0
    args = ["stress", str(run_dir), "--out", str(tmp_path / "two"), "--workers", "2"]
    assert main([*args, *some, *picked]) == 0
    assert _numbers(tmp_path / "two") == _numbers(tmp_path / "one")
    searched = json.loads((tmp_path / "two" / "stress.json").read_text())["adversarial"]
    assert list(searched) == ["frozen-small", "scripted"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "dask"], "--executor dask: not one of local, ray"),
        (["--address", "auto"], "--address is for --executor ray"),
    ],
)
def test_a_bad_executor_exits_2_and_writes_nothing(
    run_dir: Path, tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert stress(run_dir, tmp_path / "out", *args) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_ray_gives_the_numbers_of_the_local_executor(run_dir: Path, tmp_path: Path) -> None:
    """``--executor ray`` on a local Ray cluster (started and stopped by the command), each
    checkpoint shipped in its unit: the same stress.json as one local process."""
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install ray)")
    assert stress(run_dir, tmp_path / "one", *FAST) == 0
    out = tmp_path / "ray"
    args = ["stress", str(run_dir), "--out", str(out), "--executor", "ray", "--workers", "2"]
    assert main([*args, *FAST]) == 0
    assert _numbers(out) == _numbers(tmp_path / "one")


def test_stress_json_is_one_document_with_the_tables_numbers(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--grid", "1", "--perturbations", "typos", "--episodes-per-member", "1", "--no-search")
    assert stress(run_dir, tmp_path, *args, "--json", "--quiet") == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # all of stdout: no table, no file line
    assert captured.err == ""
    stored = json.loads((tmp_path / "stress.json").read_text())
    assert doc["perturbations"] == stored["perturbations"] == ["typos"]
    for name, agent in stored["agents"].items():
        assert doc["agents"][name]["clean"] == agent["clean"]
        assert doc["agents"][name]["per_perturbation"] == agent["per_perturbation"]
    assert doc["files"]["stress.json"] == str(tmp_path / "stress.json")


def test_an_llm_agent_behind_an_endpoint_is_stressed_beside_the_run_s_agents(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--llm-base-url``: the endpoint agent is swept as 'llm', with its own system prompt,
    its key read from the variable named and never written, and stress.json describing it."""
    from sim2human.testing import FakeOpenAI, Reply, completion

    prompts: list[str] = []

    def script(n: int, body: dict[str, object]) -> Reply:
        messages = body["messages"]
        assert isinstance(messages, list)
        if messages[0]["role"] == "system":  # the agent's requests, not the endpoint check
            prompts.append(str(messages[0]["content"]))
        return Reply(body=completion("Thank you for calling. Goodbye."))

    monkeypatch.setenv("STRESS_TEST_KEY", "sk-secret-value-1234")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are Ada, the clinic's careful intake assistant.")
    out = tmp_path / "out"
    with FakeOpenAI(script) as fake:
        code = stress(
            run_dir,
            out,
            "--grid", "0", "--episodes-per-member", "1", "--no-search",
            "--conditions", "scripted,llm",
            "--llm-base-url", fake.base_url, "--llm-model", "served-agent",
            "--llm-api-key-env", "STRESS_TEST_KEY", "--llm-system-prompt", str(prompt),
        )  # fmt: skip
    assert code == 0
    result = json.loads((out / "stress.json").read_text())
    assert list(result["agents"]) == ["scripted", "llm"]
    assert result["agents"]["llm"]["clean"]["n"] == 2  # one call per held-out member
    assert result["llm_agent"]["model"] == "served-agent"
    assert prompts and all(p.startswith("You are Ada") for p in prompts)
    written = " ".join(p.read_text() for p in out.iterdir() if p.is_file())
    assert "sk-secret-value-1234" not in written


def test_an_llm_agent_needs_its_endpoint(run_dir: Path, tmp_path: Path) -> None:
    assert stress(run_dir, tmp_path, "--llm-base-url", "http://localhost:9/v1") == 2
    assert stress(run_dir, tmp_path, "--conditions", "llm") == 2  # none given: no such agent


def test_a_study_that_plays_a_family_at_its_own_count_is_stressed_at_it(tmp_path: Path) -> None:
    """Without --episodes-per-member, a family the study's ``eval.per_family`` names (one call
    per real patient in the demo) plays that many episodes per member and point; the flag
    sets every member's count."""
    study = {
        **STUDY,
        "conditions": STUDY["conditions"][:1],
        "eval": {"per_family": {"terse-guarded": 1}},
    }
    root = tmp_path / "run"
    cfg = parse_study(study)
    root.mkdir()
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    for seed in cfg.seeds:
        sub = root / "conditions" / "frozen-small" / f"seed-{seed}"
        sub.mkdir(parents=True)
        PolicyAgent(IntakeScenario(), seed=seed).save(sub / "checkpoint.pt")
    cheap = ("--grid", "1", "--perturbations", "typos", "--no-search")
    assert stress(root, tmp_path / "own", *cheap) == 0
    own = json.loads((tmp_path / "own" / "stress.json").read_text())
    assert own["episodes_per_family"] == {"terse-guarded": 1}
    assert own["agents"]["frozen-small"]["n_units"] == 2 * 2 * 1  # seeds x members x 1
    page = " ".join((tmp_path / "own" / "stress.md").read_text().split())
    assert "3 episodes per member and point (1 per terse-guarded member)" in page
    assert stress(root, tmp_path / "flag", *cheap, "--episodes-per-member", "2") == 0
    flag = json.loads((tmp_path / "flag" / "stress.json").read_text())
    assert flag["episodes_per_family"] == {}
    assert flag["agents"]["frozen-small"]["n_units"] == 2 * 2 * 2
