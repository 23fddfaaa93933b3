"""Every file and folder of a run directory, named once.

A run directory is read by eight commands and written by four, across as many packages; before
this module its 21 names were spelled in 9 of them. Every reader and writer takes a name from
here (``tests/test_run_layout.py`` fails on a run-directory name spelled anywhere else), so a
reader and the writer cannot drift apart, and this page is the map of a run::

    <run>/
      config.yaml  study.json  report.{html,md,json}  diagnosis.json  diversity.json
      stress.{json,md,html}  stress-plots/  fidelity.{json,md}  human.{json,md,sqlite}
      predictivity.{json,md}
      view.html  compare.html  adaptive/adaptive.html  export-<format>.<suffix>  .sim2human.lock
      checks.jsonl                           a trainer's collapse checks (``check_condition``)
      conditions/<condition>/seed-<k>/       one sub-run (``RunLayout.sub_run``)
        config.json  members.json  episodes.jsonl  metrics.jsonl  summary.json
        checkpoint.pt  sampler.jsonl  heldout_curve.jsonl
        checkpoints/update-<NNNNN>.pt        the policy at each probe (``train.eval_every``)
      reference/<name>/                      the scripted reference agent's evaluation

A condition or family name fills a file name in three places (``diagnosis.<condition>.json``,
``report.<condition>.*``, ``conditions/<agent>/human``); the helpers below build those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The files of one sub-run (``conditions/<condition>/seed-<k>/``, ``reference/<name>/``).
CONFIG = "config.json"
MEMBERS = "members.json"
EPISODES = "episodes.jsonl"
METRICS = "metrics.jsonl"
SUMMARY = "summary.json"
CHECKPOINT = "checkpoint.pt"
POLICY = "policy"
"""A language-model agent's trained policy: a Hugging Face model directory (``agent: lm``)."""
SAMPLER_LOG = "sampler.jsonl"
"""Per update: the sampler's member shares, the batch's member counts, and its events (why)."""
CURVE_LOG = "heldout_curve.jsonl"
"""Held-out gold on a fixed subset every ``train.eval_every`` updates (logged, never used)."""
PROBE_CHECKPOINTS = "checkpoints"
"""The folder of the policy saved at each held-out probe (``probe_checkpoint``), update -1 the
untrained one; off with ``train.eval_every: 0``."""

# The files of the run itself.
CONFIG_YAML = "config.yaml"
"""The study file as it was run (the resume check compares against it)."""
STUDY_JSON = "study.json"
REPORT = "report"
"""The stem of ``report.html``, ``report.md`` and ``report.json``."""
REPORT_HTML = REPORT + ".html"
REPORT_MD = REPORT + ".md"
REPORT_JSON = REPORT + ".json"
DIAGNOSIS_JSON = "diagnosis.json"
DIVERSITY_JSON = "diversity.json"
"""Where a study stores its simulators' diversity (measured beside training, read by reports)."""
STRESS_JSON = "stress.json"
STRESS_MD = "stress.md"
STRESS_HTML = "stress.html"
STRESS_PLOTS = "stress-plots"
FIDELITY_JSON = "fidelity.json"
FIDELITY_MD = "fidelity.md"
HUMAN_JSON = "human.json"
HUMAN_MD = "human.md"
PREDICTIVITY_JSON = "predictivity.json"
PREDICTIVITY_MD = "predictivity.md"
HUMAN_DB = "human.sqlite"
"""The call page's database (``store.calls``), kept beside the run it serves."""
VIEW_HTML = "view.html"
COMPARE_HTML = "compare.html"
ADAPTIVE = "adaptive"
"""The folder of the adaptive-ensemble plots and ``adaptive.html``."""
ADAPTIVE_HTML = "adaptive.html"
LOCK_FILE = ".sim2human.lock"
CHECKS_LOG = "checks.jsonl"
"""A trainer's collapse checks (``integrations.collapse_callback``): per check its step, the
numbers it logged and its verdict; each check's evaluation is ``conditions/step-<N>/seed-0/``."""

# The folders.
CONDITIONS = "conditions"
REFERENCE = "reference"
WARM_START = "warm-start"
"""Language-model agents' warm starts, one per (model, study seed), shared by conditions."""

FILES = (
    CONFIG,
    MEMBERS,
    EPISODES,
    METRICS,
    SUMMARY,
    CHECKPOINT,
    SAMPLER_LOG,
    CURVE_LOG,
    CONFIG_YAML,
    STUDY_JSON,
    REPORT_HTML,
    REPORT_MD,
    REPORT_JSON,
    DIAGNOSIS_JSON,
    DIVERSITY_JSON,
    STRESS_JSON,
    STRESS_MD,
    STRESS_HTML,
    FIDELITY_JSON,
    FIDELITY_MD,
    HUMAN_JSON,
    HUMAN_MD,
    HUMAN_DB,
    PREDICTIVITY_JSON,
    PREDICTIVITY_MD,
    VIEW_HTML,
    COMPARE_HTML,
    ADAPTIVE_HTML,
    LOCK_FILE,
    CHECKS_LOG,
)
"""Every fixed file name above (the test that no other module spells one reads this)."""

FOLDERS = (CONDITIONS, REFERENCE, ADAPTIVE, STRESS_PLOTS, PROBE_CHECKPOINTS, POLICY, WARM_START)

_PROBE = re.compile(r"update-(-?\d+)\.pt")


def probe_checkpoint(update: int) -> str:
    """``checkpoints/update-<NNNNN>.pt``: the policy after ``update`` (-1: before training),
    relative to its sub-run (as ``metrics.jsonl`` names it)."""
    return f"{PROBE_CHECKPOINTS}/update-{update:05d}.pt"


def probe_updates(sub_run: Path) -> list[tuple[int, Path]]:
    """The probe checkpoints a sub-run saved, as (update, path) in update order."""
    folder = sub_run / PROBE_CHECKPOINTS
    found = [(m, p) for p in folder.glob("update-*.pt") if (m := _PROBE.fullmatch(p.name))]
    return sorted((int(m.group(1)), p) for m, p in found)


def check_condition(step: int) -> str:
    """``step-<NNNNNN>``: the condition a collapse check at training step ``step`` is stored as
    (zero-padded, so conditions list in step order)."""
    return f"step-{step:06d}"


def seed_dir(seed: int) -> str:
    """``seed-<k>``: a condition's sub-run for one seed."""
    return f"seed-{seed}"


def report_stem(condition: str | None = None) -> str:
    """``report``, or ``report.<condition>`` for a report of one condition."""
    return REPORT if condition is None else f"{REPORT}.{condition}"


def diagnosis_name(condition: str | None = None) -> str:
    """``diagnosis.json``, or ``diagnosis.<condition>.json`` for one condition's."""
    return DIAGNOSIS_JSON if condition is None else f"diagnosis.{condition}.json"


def export_name(fmt: str, suffix: str) -> str:
    """``export-<format><suffix>``: where ``sim2human export`` writes by default."""
    return f"export-{fmt}{suffix}"


@dataclass(frozen=True)
class RunLayout:
    """The paths of one run directory (``root``); the names alone are the constants above."""

    root: Path

    @property
    def conditions(self) -> Path:
        return self.root / CONDITIONS

    def condition(self, name: str) -> Path:
        """``conditions/<name>/``: the sub-runs of one condition (and its human calls)."""
        return self.conditions / name

    def sub_run(self, condition: str, seed: int) -> Path:
        """``conditions/<condition>/seed-<seed>/``: one sub-run's directory."""
        return self.condition(condition) / seed_dir(seed)

    @property
    def references(self) -> Path:
        return self.root / REFERENCE

    def reference(self, name: str) -> Path:
        """``reference/<name>/``: the scripted reference agent's evaluation on one scenario."""
        return self.references / name

    def diagnosis(self, condition: str | None = None) -> Path:
        return self.root / diagnosis_name(condition)

    def file(self, name: str) -> Path:
        """A file of the run itself: ``layout.file(STUDY_JSON)``."""
        return self.root / name


def sub_run_relative(condition: str, seed: int) -> Path:
    """``conditions/<condition>/seed-<seed>`` relative to the run directory (as the ledger and
    ``study.json`` record it)."""
    return Path(CONDITIONS) / condition / seed_dir(seed)
