"""``sim2human model ...``: serve and measure the embedded model.

The main CLI registers ``model_app``; ``python -m sim2human.cli.model`` runs it standalone.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import typer

from sim2human.errors import Sim2HumanError
from sim2human.llm.client import ChatClient, EndpointConfig
from sim2human.llm.local import default_threads, local_model

model_app = typer.Typer(
    name="model",
    help="The embedded default model (SmolLM2-135M-Instruct over llama.cpp).",
    add_completion=False,
    no_args_is_help=True,
)

_BENCH_PROMPTS = [
    "Describe your last visit to a doctor.",
    "Explain how to book a table at a restaurant.",
    "Tell me about your favourite city.",
    "What do you do on a rainy weekend?",
    "Describe the steps to bake bread.",
    "Why do people keep pets?",
    "Tell me a short story about a lost key.",
    "What makes a good phone call with customer support?",
]


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Deliberate errors become one line and their exit code, never a traceback."""
    try:
        yield
    except Sim2HumanError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None


@model_app.command()
def serve(
    port: int | None = typer.Option(
        None, "--port", min=1, max=65535, help="port on 127.0.0.1 (default: a free one)"
    ),
    parallel: int = typer.Option(4, "--parallel", min=1, max=64, help="requests decoded together"),
    threads: int | None = typer.Option(
        None, "--threads", min=1, max=1024, help="llama.cpp threads"
    ),
    verbose: bool = typer.Option(False, "--verbose", help="show llama.cpp's own log"),
) -> None:
    """Serve the embedded model as an OpenAI-compatible endpoint until Ctrl-C."""
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with (
            _clean_errors(),
            local_model(port, n_parallel=parallel, n_threads=threads, verbose=verbose) as ep,
        ):
            typer.echo(f"base_url: {ep.base_url}")
            typer.echo(f"model:    {ep.model}")
            typer.echo("serving; press Ctrl-C to stop", err=True)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    typer.echo("stopped", err=True)


@model_app.command()
def bench(
    parallel: int = typer.Option(4, "--parallel", min=1, max=64, help="slots and streams"),
    threads: int | None = typer.Option(
        None, "--threads", min=1, max=1024, help="llama.cpp threads"
    ),
    max_tokens: int = typer.Option(128, "--max-tokens", min=1, max=8192, help="tokens per request"),
) -> None:
    """Measure decode tokens/s of the embedded model: one stream, then PARALLEL at once."""
    with _clean_errors(), local_model(n_parallel=parallel, n_threads=threads) as ep:
        typer.echo(f"threads={threads or default_threads()} parallel={parallel}")
        for streams in sorted({1, parallel}):
            tokens, wall = asyncio.run(_measure(ep, streams, max_tokens))
            rate = tokens / wall
            typer.echo(f"{streams} stream(s): {tokens} tokens in {wall:.1f}s = {rate:.1f} tokens/s")


async def _measure(ep: EndpointConfig, streams: int, max_tokens: int) -> tuple[int, float]:
    async with ChatClient(ep) as client:
        # A short warm-up so model paging and thread start-up are not timed.
        await client.chat([{"role": "user", "content": "Hi"}], temperature=0, max_tokens=4)
        start = time.perf_counter()
        results = await asyncio.gather(
            *(
                client.chat(
                    [{"role": "user", "content": _BENCH_PROMPTS[i % len(_BENCH_PROMPTS)]}],
                    temperature=0.7,
                    seed=i,
                    max_tokens=max_tokens,
                )
                for i in range(streams)
            )
        )
        wall = time.perf_counter() - start
    return sum(r.completion_tokens for r in results), wall


if __name__ == "__main__":
    model_app()
