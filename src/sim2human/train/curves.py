"""The built-in trainer's curves, also sent where practitioners look: TensorBoard, W&B, MLflow.

Each PPO update's ``metrics.jsonl`` row (train proxy and gold, policy and act entropy, KL, and
at probe points the held-out gold) is copied as scalars to the sinks named by ``--log-to``
(``study --log-to tensorboard,wandb``; worker processes read it from ``SIM2HUMAN_LOG_TO``). The
sinks only read the rows: what training does, and every number of the study, is the same with
them or without. Each is an optional extra, imported only when asked for, and offline:

- ``tensorboard``: event files in each sub-run's ``tensorboard/`` (``tensorboard --logdir RUN``);
- ``wandb``: offline runs under ``RUN/wandb/`` (``wandb sync RUN/wandb/offline-run-*``);
- ``mlflow``: a file store at ``RUN/mlruns`` (``mlflow ui --backend-store-uri RUN/mlruns``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Protocol

from sim2human.errors import ModelUnavailableError, UsageError

ENV = "SIM2HUMAN_LOG_TO"
SINKS = {"tensorboard": "tensorboard", "wandb": "wandb", "mlflow": "mlflow"}
"""Sink name -> the module it needs (and the extra of the same name that installs it)."""
SCALARS = {
    "train_proxy": "proxy/train",
    "train_gold": "gold/train",
    "heldout_gold": "gold/heldout_probe",
    "entropy": "entropy/policy",
    "act_entropy": "entropy/acts_bits",
    "top_act_share": "behaviour/top_act_share",
    "approx_kl": "kl/approx",
    "kl_init": "kl/from_init",
    "d": "kl/d",
    "reward_std": "train/reward_std",
    "group_reward_std": "train/group_reward_std",
    "task_pay": "reward/task_pay",
    "grad_norm": "train/grad_norm",
}
"""``metrics.jsonl`` field -> the scalar's tag (grouped the way TensorBoard shows tags)."""


def parse_sinks(text: str | None) -> tuple[str, ...]:
    """``"tensorboard,wandb"`` -> its sink names, each known and installed; a usage error (or,
    for a missing extra, the ``pip install`` to run) otherwise."""
    names = tuple(dict.fromkeys(t.strip() for t in (text or "").split(",") if t.strip()))
    for name in names:
        if name not in SINKS:
            raise UsageError(f"--log-to: unknown sink {name!r} (known: {', '.join(SINKS)})")
        if importlib.util.find_spec(SINKS[name]) is None:
            raise ModelUnavailableError(
                f"--log-to {name} needs the {name} extra: pip install 'sim2human[{name}]'"
            )
    return names


class Sink(Protocol):
    def scalars(self, step: int, values: Mapping[str, float]) -> None: ...


class CurveLog:
    """Copies metrics rows to the open sinks; with none, does nothing."""

    def __init__(self, sinks: list[Sink]) -> None:
        self.sinks = sinks

    def log(self, row: Mapping[str, Any]) -> None:
        values = {tag: float(row[key]) for key, tag in SCALARS.items() if _number(row.get(key))}
        if values and self.sinks:
            step = int(row.get("episodes_seen") or 0)  # the x axis of the report's curves
            for sink in self.sinks:
                sink.scalars(step, values)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


@contextmanager
def open_curves(
    out: Path, name: str, config: Mapping[str, Any], sinks: tuple[str, ...] | None = None
) -> Iterator[CurveLog]:
    """The sinks for the sub-run in ``out`` (``name``: condition/seed-N), open for its
    training; ``sinks`` default to ``$SIM2HUMAN_LOG_TO``."""
    chosen = parse_sinks(os.environ.get(ENV)) if sinks is None else sinks
    root = _study_root(out)
    with ExitStack() as stack:
        opened: list[Sink] = []
        for s in chosen:
            if s == "tensorboard":
                opened.append(stack.enter_context(_tensorboard(out / "tensorboard")))
            elif s == "wandb":
                opened.append(stack.enter_context(_wandb(root / "wandb", name, config)))
            else:
                opened.append(stack.enter_context(_mlflow(root / "mlruns", name, config)))
        yield CurveLog(opened)


def _study_root(out: Path) -> Path:
    """A study's directory for a sub-run in ``STUDY/conditions/C/seed-N``; else ``out``."""
    return (
        out.parents[2] if len(out.parents) > 2 and out.parent.parent.name == "conditions" else out
    )


@contextmanager
def _tensorboard(folder: Path) -> Iterator[Sink]:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(folder))

    class TensorBoard:
        def scalars(self, step: int, values: Mapping[str, float]) -> None:
            for tag, value in values.items():
                writer.add_scalar(tag, value, global_step=step)

    try:
        yield TensorBoard()
    finally:
        writer.close()


@contextmanager
def _wandb(folder: Path, name: str, config: Mapping[str, Any]) -> Iterator[Sink]:
    import wandb

    folder.mkdir(parents=True, exist_ok=True)
    run = wandb.init(
        project="sim2human", name=name, dir=str(folder), mode="offline", config=dict(config)
    )

    class WandB:
        def scalars(self, step: int, values: Mapping[str, float]) -> None:
            run.log(dict(values), step=step)

    try:
        yield WandB()
    finally:
        run.finish()


@contextmanager
def _mlflow(folder: Path, name: str, config: Mapping[str, Any]) -> Iterator[Sink]:
    from mlflow.tracking import MlflowClient

    folder.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=folder.resolve().as_uri())
    experiment = "sim2human"
    found = client.get_experiment_by_name(experiment)
    try:
        exp_id = found.experiment_id if found else client.create_experiment(experiment)
    except Exception:  # another worker created it first
        again = client.get_experiment_by_name(experiment)
        if again is None:
            raise
        exp_id = again.experiment_id
    run_id = client.create_run(exp_id, run_name=name).info.run_id
    for key, value in config.items():
        client.log_param(run_id, key, str(value)[:500])

    class MLflow:
        def scalars(self, step: int, values: Mapping[str, float]) -> None:
            for tag, value in values.items():
                client.log_metric(run_id, tag, value, step=step)

    try:
        yield MLflow()
    finally:
        client.set_terminated(run_id)
