"""One exception tree for everything sim2human raises on purpose.

Sim2HumanError                 base: the CLI prints its message, never a traceback
├── UsageError                 bad input from the user (config, names, flags): exit code 2
│   └── ConfigError            a config file that does not validate; names file and field
├── RunDirError                a run directory that is missing, partial or corrupted
├── ModelUnavailableError      an optional model or extra is not installed; says what to run
└── EndpointError              an LLM endpoint failed after its bounded retries
"""

from __future__ import annotations


class Sim2HumanError(Exception):
    """Base of all deliberate errors; ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(Sim2HumanError):
    exit_code = 2


class ConfigError(UsageError):
    pass


class RunDirError(Sim2HumanError):
    exit_code = 2


class ModelUnavailableError(Sim2HumanError):
    exit_code = 2


class EndpointError(Sim2HumanError):
    pass
