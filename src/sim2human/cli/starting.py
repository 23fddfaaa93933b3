"""A start that fails leaves nothing behind: checks made before a command writes anything, and
the removal of a run directory a failed start made.

A study's endpoints are probed in its sub-runs, after the run directory exists; a wrong URL
then left a directory that the next attempt refused without ``--resume`` although nothing had
run. ``check_endpoints`` probes them first, and ``discard_unstarted`` removes a directory this
command made when the study failed before any sub-run finished: ``--resume`` reruns every
unfinished sub-run whole (``experiments.study.runner``), so such a directory holds nothing a resume
would keep (``eval-agent``: before any episode was logged). An ``eval-agent`` killed before
its first episode (``kill -9``: no cleanup runs) left an empty log, and its rerun was refused as
"already holds an evaluation"; ``holds_evaluation`` tells such a folder from a real one. A busy
port is found before ``human serve`` creates its database (``port_free``). A study on a
scenario file that ``scenario check`` fails is refused before it trains
(``scenario_file_passes``): it ran to the end on a task its own callers could not be heard in.
So is an endpoint defined under ``llm.endpoints`` that no member plays on (``endpoints_used``):
members that do not say ``endpoint: NAME`` play on the embedded model (``local``), and a study
whose file configured another model ran without a request to it, and without a word.
"""

from __future__ import annotations

import errno
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from sim2human.errors import UsageError
from sim2human.experiments.study.config import StudyConfig
from sim2human.scenarios.refs import is_path
from sim2human.store.layout import CONDITIONS, EPISODES, SUMMARY

if TYPE_CHECKING:
    from sim2human.experiments.study.plan import StudyPlan


def check_endpoints(plan: StudyPlan) -> None:
    """One tiny request to every external endpoint the study's LLM members use (the embedded
    model starts with the study); ``EndpointUnusableError`` (exit 2) names one that fails."""
    from sim2human.llm.client import EndpointConfig
    from sim2human.llm.runtime import LLMRuntime

    cfg = plan.config
    remote = {n for n in plan.endpoints if isinstance(cfg.llm.entry(n), EndpointConfig)}
    if remote:
        settings = cfg.llm.model_copy(update={"cache": None})  # a probe caches nothing
        with LLMRuntime.open(settings, remote):
            pass


def scenario_file_passes(cfg: StudyConfig, where: Path) -> None:
    """Refuse (exit 2) a study whose scenario file fails ``sim2human scenario check``'s
    contract checks (``checks.crossing.check_everything``, about a second on a small file),
    naming the first violation; a registered, packaged or Python scenario is left alone."""
    if not is_path(cfg.scenario):
        return
    from sim2human.checks.crossing import check_everything
    from sim2human.scenarios.catalog import get_scenario

    reports = check_everything(get_scenario(cfg.scenario))  # as `scenario check` runs them
    failed = [f"{r.subject}: {f.check}: {f.detail}" for r in reports for f in r.violations()]
    if failed:
        raise UsageError(
            f"{where}: scenario: {cfg.scenario} fails `sim2human scenario check` "
            f"({len(failed)} violation(s); first: {failed[0]}); run it to see each"
        )


def endpoints_used(plan: StudyPlan, where: Path) -> str:
    """Refuse (exit 2) an endpoint of ``llm.endpoints`` that none of the study's ``llm``
    members uses; the note (else ``""``) naming the ``llm`` blocks that default to the embedded
    model while other endpoints are defined (one may mean it, so it is said, not refused)."""
    from sim2human.llm.runtime import LOCAL

    cfg, used = plan.config, plan.endpoints
    defined = sorted(set(cfg.llm.endpoints) - {LOCAL})
    if not defined:
        return ""
    if unused := [name for name in defined if name not in used]:
        local = f"; its llm members play on {LOCAL} (the embedded model)" if LOCAL in used else ""
        raise UsageError(
            f"{where}: llm.endpoints.{unused[0]}: no member uses it{local}: name it in "
            f"the members that should (`endpoint: {unused[0]}`), or remove it"
        )
    llm = cfg.ensemble.llm
    blocks = {
        **{f"ensemble.llm.{k}": getattr(llm, k) for k in ("train", "heldout") if llm is not None},
        **{
            f"conditions.{c.name}.simulator.llm": c.simulator and c.simulator.llm
            for c in cfg.conditions
        },
    }
    silent = [
        name for name, b in blocks.items() if b is not None and "endpoint" not in b.model_fields_set
    ]
    if not silent:
        return ""
    return (
        f"{where}: {', '.join(silent)} name no endpoint, so they play on {LOCAL} (the embedded "
        f"model), not on {', '.join(defined)}; say `endpoint: {LOCAL}` to mean it"
    )


def discard_unstarted(target: Path) -> bool:
    """Remove ``target`` (a run directory this command made) if nothing in it would be kept:
    no sub-run of a study finished, no episode of an ``eval-agent`` run was logged. Whether it
    was removed."""
    if target.is_symlink() or not target.is_dir():
        return False
    episodes = target / EPISODES
    if any((target / CONDITIONS).rglob(SUMMARY)) or (
        episodes.exists() and episodes.stat().st_size > 0
    ):
        return False
    shutil.rmtree(target, ignore_errors=True)
    return not target.exists()


def holds_evaluation(target: Path) -> bool:
    """Whether ``target`` holds an ``eval-agent`` evaluation to keep: a summary, or an episode
    log with at least one whole line (the log writes each episode as one whole line). A log
    with none (empty, or one line cut by a kill) is removed, so a rerun starts afresh there."""
    episodes = target / EPISODES
    if (target / SUMMARY).exists() or episodes.is_symlink():
        return True
    if not episodes.is_file():
        return episodes.exists()
    with episodes.open("rb") as log:
        if any(line.endswith(b"\n") and line.strip() for line in log):
            return True
    episodes.unlink()
    return False


def port_free(host: str, port: int) -> None:
    """Refuse (exit 2) a port another process listens on, as uvicorn would bind it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise UsageError(
                    f"--port {port}: {host}:{port} is already in use; choose another --port"
                ) from None
            raise UsageError(
                f"--host {host} --port {port}: cannot listen: {err.strerror}"
            ) from None
