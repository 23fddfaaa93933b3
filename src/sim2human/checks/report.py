"""What a contract check found: one ``Finding`` per check, gathered in a ``CheckReport``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    detail: str = ""
    skipped: bool = False
    """Not run, for the reason in ``detail`` (it counts as no violation)."""


@dataclass
class CheckReport:
    """What was checked on ``subject`` (``kind``: scenario, simulator or agent)."""

    subject: str
    kind: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def violations(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def run(self, check: str, fn: Callable[[], str | None]) -> None:
        """Record ``fn``: it returns what is wrong (or None), or raises (also a violation)."""
        try:
            problem = fn()
        except Exception as err:  # a check that crashes found a violation: say which
            problem = f"raised {type(err).__name__}: {err}"
        self.findings.append(Finding(check, problem is None, problem or ""))

    def skip(self, check: str, why: str) -> None:
        """Record ``check`` as not run here, and why (say, it needs a network)."""
        self.findings.append(Finding(check, True, why, skipped=True))

    def lines(self) -> list[str]:
        head = f"{self.kind} {self.subject}: " + (
            "every check passed" if self.ok else f"{len(self.violations())} violation(s)"
        )
        return [head] + [
            f"  {_mark(f)} {f.check}" + (f": {f.detail}" if f.detail else "") for f in self.findings
        ]


def _mark(f: Finding) -> str:
    return "skip" if f.skipped else "ok  " if f.ok else "FAIL"


def expect(condition: object, problem: str) -> str | None:
    """``problem`` unless ``condition`` holds: a check's verdict."""
    return None if condition else problem
