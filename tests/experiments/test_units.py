"""The executor seam without Ray: deterministic unit ids, the driver's ledger (the one writer,
a duplicate dropped), shipped files written with ``summary.json`` last, and the usage errors of
``--executor``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim2human.cli.app import main
from sim2human.errors import UsageError
from sim2human.experiments.executors import backends, local_executor
from sim2human.experiments.executors.backends import Choice
from sim2human.experiments.executors.units import Ledger, Unit, Work, perform, shipped_order
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.runner import run_study
from tiny_study import TINY

DEMO = Path(__file__).parents[2] / "examples" / "collapse.yaml"


def _write_run(context: str, name: str, out: str) -> str:
    """A unit that writes a folder the way a sub-run does (summary last) and returns a value."""
    folder = Path(out)
    (folder / "deep").mkdir(parents=True)
    (folder / "episodes.jsonl").write_text(f'{{"id": "{context}-{name}"}}\n')
    (folder / "deep" / "x.bin").write_bytes(b"\x00\x01")
    (folder / "summary.json").write_text("{}")
    return f"{context}:{name}"


def _identity(payload: str) -> str:
    return payload


def test_a_shipped_unit_is_written_by_the_ledger_once(tmp_path: Path) -> None:
    root = tmp_path / "run"
    unit = Unit("conditions/a/seed-0", "a seed 0", ("a",), str(root / "conditions/a/seed-0"))
    work = Work(_write_run, _identity, "ctx")
    shipped = perform(work, "ctx", unit)
    assert not (root / "conditions").exists()  # the worker wrote into its own scratch folder
    assert [name for name, _ in shipped_order(shipped.files)][-1] == "summary.json"
    ledger = Ledger.of(root, [unit])
    assert ledger.deliver(shipped) is True
    sub = root / "conditions" / "a" / "seed-0"
    assert (sub / "episodes.jsonl").read_text() == '{"id": "ctx-a"}\n'
    assert (sub / "deep" / "x.bin").read_bytes() == b"\x00\x01"
    (sub / "episodes.jsonl").write_text("kept")
    assert ledger.deliver(shipped) is False  # a second result for the same id: dropped
    assert ledger.duplicates == 1 and (sub / "episodes.jsonl").read_text() == "kept"
    assert ledger.values == {unit.id: "ctx:a"}


def test_a_unit_that_writes_one_file_is_shipped_as_that_file(tmp_path: Path) -> None:
    def one_file(context: str, out: str) -> None:
        Path(out).write_text(json.dumps({"by": context}))

    unit = Unit("diversity.json", "diversity", (), str(tmp_path / "diversity.json"))
    shipped = perform(Work(one_file, _identity, "w"), "w", unit)
    Ledger.of(tmp_path, [unit]).deliver(shipped)
    assert json.loads((tmp_path / "diversity.json").read_text()) == {"by": "w"}


def test_unit_ids_must_be_unique(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not unique"):
        Ledger.of(tmp_path, [Unit("x", "x", ()), Unit("x", "y", ())])


def test_a_study_s_units_have_ids_from_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[Unit]] = []

    class Stop(Exception):
        pass

    def record(self: Any, work: Work, units: list[Unit], ledger: Ledger, **kw: Any) -> None:
        seen.append(list(units))
        raise Stop

    monkeypatch.setattr(local_executor.LocalExecutor, "run", record)
    for name in ("a", "b"):
        with pytest.raises(Stop):
            run_study(parse_study(TINY), tmp_path / name, workers=1)
    first, second = ({u.id for u in units} for units in seen)
    assert (
        first
        == second
        == {
            "conditions/frozen-small/seed-0",
            "conditions/ensemble-uniform/seed-0",
            "reference/scripted",
            "diversity.json",
        }
    )


def test_executor_ray_without_ray_is_one_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(backends, "ray_installed", lambda: False)
    out = tmp_path / "run"
    code = main(["study", str(DEMO), "--quick", "--executor", "ray", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--executor ray needs Ray" in err and "Traceback" not in err
    assert not out.exists()  # refused before anything was written


def test_executor_choices_are_checked() -> None:
    with pytest.raises(UsageError, match="not one of local, ray"):
        Choice("dask").check()
    with pytest.raises(UsageError, match="--address is for --executor ray"):
        Choice("local", "auto").check()
