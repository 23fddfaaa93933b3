"""``scripts/lm_warm_start.py`` makes the warm start a study would (the same folder name, so a
study reuses it), ``scripts/lm_play.py`` plays it on the training members (and saves and
compares its calls, with ``scripts/saved_calls.py`` over seeds), and ``scripts/line_share.py``
counts the agent turns that say a line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.lm_condition import warm_start_dir
from sim2human.experiments.study.world import StudyWorld
from sim2human.train.config import LMAgentConfig

ROOT = Path(__file__).resolve().parent.parent


def run(script: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "scripts" / script), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


def test_a_warm_start_alone_is_the_studys_and_plays(tmp_path: Path) -> None:
    study = yaml.safe_load((ROOT / "examples" / "lm-collapse.yaml").read_text())
    study["quick"]["agent"]["warm_start"] = {"episodes": 6, "epochs": 1, "copy_drill": 2}
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(study))
    made = run("lm_warm_start.py", path, tmp_path / "out")
    assert made.returncode == 0, made.stderr
    cfg = load_study(path, quick=True)
    assert isinstance(cfg.agent, LMAgentConfig)
    folder = warm_start_dir(tmp_path / "out", cfg.agent, StudyWorld.build(cfg), 0)
    assert made.stdout.startswith(str(folder))
    meta = json.loads((folder / "warm_start.json").read_text())
    assert meta["calls"] == 6 and meta["copy_drill"]["steps"] == 2
    args = ("--temperatures", "0", "--per-member", "1", "--fields")
    saved = tmp_path / "calls.jsonl"
    played = run("lm_play.py", path, folder, *args, "--against", saved)
    assert played.returncode == 2 and "calls.jsonl: no such file" in played.stderr  # not yet
    played = run("lm_play.py", path, folder, folder, *args, "--save", saved)  # twice: greedy
    assert played.returncode == 0, played.stderr
    assert played.stdout.count("| 0.0 | 12 |") == 2 and "| medications |" in played.stdout
    same = "| 0.0 | +0.0% [+0.0%, +0.0%] | +0.0% [+0.0%, +0.0%] |"
    assert f"| out/{folder.name} (2) {same}" in played.stdout, played.stdout
    calls = [json.loads(line) for line in saved.read_text().splitlines()]
    assert len(calls) == 24 and {c["member"] for c in calls} == {c["member"] for c in calls[:12]}
    again = run("lm_play.py", path, folder, *args, "--against", saved)  # the same calls again
    assert "| 0.0 | +0.0% [+0.0%, +0.0%] | +0.0% [+0.0%, +0.0%] |" in again.stdout, again.stderr
    held = tmp_path / "held.jsonl"  # the held-out programmatic members, no replayed patient
    read = run("lm_play.py", path, folder, *args[:4], "--heldout", "--save", held)
    assert read.returncode == 0 and "| 0.0 | 12 |" in read.stdout, read.stderr
    cfg_world = StudyWorld.build(cfg)
    programmatic = {m.id for m in cfg_world.ensemble.heldout if m.kind == "persona"}
    held_members = {json.loads(line)["member"] for line in held.read_text().splitlines()}
    assert held_members == programmatic and held_members.isdisjoint(c["member"] for c in calls)
    both = run("lm_play.py", path, folder, "--heldout", "--condition", "frozen-small")
    assert both.returncode == 2 and "give one" in both.stderr
    worse = tmp_path / "worse.jsonl"  # every call of the other side one field worse, never done
    worse.write_text(
        "".join(
            json.dumps({**c, "fields_right": c["fields_right"] - 0.125, "complete": False}) + "\n"
            for c in calls[:12]
        )
    )
    pooled = run("saved_calls.py", f"{worse},{worse}", f"{saved},{saved}")
    assert pooled.returncode == 0, pooled.stderr
    assert (
        "old at 0.0: 24 calls" in pooled.stdout
        and "| new | 0.0 | +12.5% [+12.5%, +12.5%] |" in (pooled.stdout)
    )
    probed = run("copy_probe.py", path, folder, "--calls", "3", "--drills", "4")
    assert probed.returncode == 0, probed.stderr
    rows = [r for r in probed.stdout.splitlines() if r.startswith(f"| out/{folder.name} |")]
    assert [r.split(" | ")[1] for r in rows] == [
        "reference calls",
        "drill, callers' own turns",
        "drill, words in random order",
        "drill, joined answers",
    ]
    assert rows[1].split(" | ")[2] == "16"  # 4 sequences of 4 exchanges, one value each
    assert int(rows[3].split(" | ")[2]) >= 32  # joined: two recorded answers or more each
    refused = run("lm_warm_start.py", ROOT / "examples" / "collapse.yaml", tmp_path / "x")
    assert refused.returncode != 0 and "not a language model" in refused.stderr


def test_the_share_of_agent_turns_that_say_a_line(tmp_path: Path) -> None:
    def call(phase: str, split: str, step: int | None, *agent: str) -> str:
        turns = [{"speaker": "user", "text": "TRIGGER from the caller"}]
        turns += [{"speaker": "agent", "text": t} for t in agent]
        return json.dumps({"phase": phase, "split": split, "step": step, "turns": turns})

    sub = tmp_path / "conditions" / "frozen" / "seed-0"
    sub.mkdir(parents=True)
    rows = [
        call("train", "train", 0, "Hello.", "Bye."),
        call("train", "train", 10, "Trigger. How bad is it?", "Bye."),
        call("eval", "heldout", None, "trigger, then a question", "Bye.", "Bye."),
        call("eval", "heldout", None, "Hello.", "Bye."),
    ]
    (sub / "episodes.jsonl").write_text("\n".join(rows) + "\n")
    out = run("line_share.py", tmp_path, "Trigger")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("| frozen | seed-0 | training, early steps | 0/2 turns = 0%" in x for x in lines)
    assert any("training, late steps | 1/2 turns = 50%" in x and "1 of 1 calls" in x for x in lines)
    assert any("evaluation, heldout | 1/5 turns = 20%" in x and "1 of 2 calls" in x for x in lines)
    assert run("line_share.py", tmp_path / "none", "x").returncode != 0


def test_the_smollm2_study_files_load_as_studies_in_every_form(tmp_path: Path) -> None:
    """``benchmarks/lm_gpu_configs.py`` writes the GPU, smoke and two-core forms; each must be
    a study sim2human accepts, on the device and with the families its form says."""
    script = str(ROOT / "benchmarks" / "lm_gpu_configs.py")
    for form, device in (("", "cuda"), ("--smoke", "cpu"), ("--cpu", "cpu")):
        out = tmp_path / (form or "gpu")
        made = subprocess.run(
            [sys.executable, script, str(out), *([form] if form else [])],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        for scenario in ("intake", "support"):
            cfg = load_study(out / f"{scenario}.yaml")
            assert isinstance(cfg.agent, LMAgentConfig) and cfg.agent.model == "smollm2"
            assert cfg.agent.device == device
            assert [c.name for c in cfg.conditions] == ["frozen-small", "ensemble-randomized"]
            if form == "--cpu":
                assert not any(f.endswith("-heldout") for f in cfg.ensemble.heldout), scenario
                assert cfg.agent.micro_batch == 1


def test_grpo_s_calls_by_block_and_what_the_agent_does_after_a_caller_s_words(
    tmp_path: Path,
) -> None:
    sub = tmp_path / "conditions" / "frozen" / "seed-0"
    sub.mkdir(parents=True)
    steps = [  # 4 calls a step; the first two steps 3 of 4 complete, the last two 1 of 4
        {"update": u, "episodes_seen": 4 * (u + 1), "train_proxy": 0.5 + 0.1 * u,
         "train_gold": 0.75 if u < 2 else 0.25, "agent_turns": 8.0, "kl_init": 0.01 * u}
        for u in range(4)
    ]  # fmt: skip
    (sub / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in steps))

    def call(phase: str, step: int | None, closes: bool, done: bool, split: str = "train") -> str:
        turns = [
            {"speaker": "user", "text": "Oh! HERE'S EVERYTHING: a hotel."},
            {"speaker": "agent", "text": "Bye.", "tool_calls": [{"name": "submit"}] * closes},
        ]
        row = {"phase": phase, "split": split, "step": step, "turns": turns}
        return json.dumps({**row, "gold": {"success": done}})

    calls = [call("train", 0, False, True), call("train", 2, True, False)]
    calls += [call("train", 3, True, True), call("eval", None, True, True)]
    calls += [call("eval", None, True, False, "heldout")]  # held out: not read
    (sub / "episodes.jsonl").write_text("\n".join(calls) + "\n")
    out = run("grpo_blocks.py", tmp_path, "--block", "2", "--after", "here's everything")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "frozen/seed-0"
    assert lines[1].startswith("  steps 0-1: proxy 0.550, gold 6/8 = 75% [")
    assert lines[2].startswith("  steps 2-3: proxy 0.750, gold 2/8 = 25% [")
    assert lines[2].endswith("agent turns 8.0, KL 0.0300")
    assert lines[3].startswith("  last block minus first: -50.0% [")
    assert lines[4:] == [
        "  GRPO steps 0-1: 1 calls, the caller said it in 1; the agent submitted on its next "
        "turn in 0 of them (0 complete)",
        "  GRPO steps 2-3: 2 calls, the caller said it in 2; the agent submitted on its next "
        "turn in 2 of them (1 complete)",
        "  evaluation, training members: 1 calls, the caller said it in 1; the agent submitted "
        "on its next turn in 1 of them (1 complete)",
    ]
    assert run("grpo_blocks.py", tmp_path / "none").returncode == 2
