"""One exception tree for everything sim2human raises on purpose.

Sim2HumanError                 base: the CLI prints its message, never a traceback
├── UsageError                 bad input from the user (config, names, flags): exit code 2
│   └── ConfigError            a config file that does not validate; names file and field
├── RunDirError                a run directory that is missing, partial or corrupted
├── ModelUnavailableError      an optional model or extra is not installed; says what to run
└── EndpointError              an LLM endpoint failed after its bounded retries: exit code 1
    └── EndpointUnusableError  an endpoint that fails its first probe (wrong URL, model, key,
                               nothing listening): bad input, so exit code 2

Other exit codes the CLI uses: 0 success, 1 collapse detected (``diagnose --fail-on-collapse``)
or a study some of whose jobs failed, 130 interrupted (Ctrl-C or SIGTERM). docs/reference/cli.md
lists them all; ``tests/cli/test_exit_codes.py`` keeps it and this tree in step.
"""

from __future__ import annotations

from pydantic import ValidationError


class Sim2HumanError(Exception):
    """Base of all deliberate errors; ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(Sim2HumanError):
    """A bad command line, file or argument: the user can fix it (exit 2)."""

    exit_code = 2


class ConfigError(UsageError):
    """A study or scenario file that does not validate (a ``UsageError``: exit 2)."""


class RunDirError(Sim2HumanError):
    """A run directory that is missing, damaged or not a run (exit 2)."""

    exit_code = 2


class ModelUnavailableError(Sim2HumanError):
    """The embedded model cannot be found or loaded (exit 2)."""

    exit_code = 2


class EndpointError(Sim2HumanError):
    """A chat endpoint that refused, failed or answered garbage (the run failed: exit 1)."""


class EndpointUnusableError(EndpointError):
    """Raised before any episode is played, so nothing is lost: a usage error."""

    exit_code = 2


def first_problem(err: ValidationError) -> tuple[str, str]:
    """(dotted location, message) of a validation error's first problem, in plain words:
    ``""`` for the top level, "unknown key" for a forbidden extra, no pydantic prefixes, and
    how many more problems there are."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    else:
        msg = first["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    more = err.error_count() - 1
    return where, msg + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
