"""A run log nobody closes (verl's agent loops have no teardown) still ends as a finished run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sim2human.store.layout import MEMBERS, SUMMARY

SCRIPT = """
import sys
from sim2human.integrations.population import population
from sim2human.integrations.runlog import RunLog

pop = population()
log = RunLog(sys.argv[1], pop, trainer="verl")
from sim2human.agents.base import AgentTurn

conv = pop.open(pop.ensemble.heldout[0], 0, phase="eval")
conv.step(AgentTurn(text="Thank you, goodbye."))
log.write(conv.episode())
"""  # exits without log.close()


def test_an_unclosed_log_is_closed_when_its_process_exits(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], check=True, timeout=120)
    assert (tmp_path / MEMBERS).is_file()
    assert '"condition": "verl"' in (tmp_path / SUMMARY).read_text()


def test_closing_twice_writes_once(tmp_path: Path) -> None:
    from sim2human.integrations.population import population
    from sim2human.integrations.runlog import RunLog

    log = RunLog(tmp_path, population(), trainer="t")
    log.close()
    (tmp_path / SUMMARY).unlink()
    log.close()
    assert not (tmp_path / SUMMARY).exists()
