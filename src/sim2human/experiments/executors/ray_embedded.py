"""The embedded model on a Ray cluster: one llama.cpp server per node, shared by that node's
workers (the ``ray`` extra; only ``ray_executor`` imports this module).

The driver does not start it (its 127.0.0.1 is unreachable from other nodes,
``backends.served_for``). The first worker on a node to need an ``Embedded`` endpoint creates
a named actor on its own node (``NodeAffinitySchedulingStrategy``, hard), which starts the
server; every other worker there gets the same actor by its name and is handed its URL
(``node_server``, what ``llm.runtime.serve_embedded_by`` is given in each worker). Ray's
``get_if_exists`` makes that get-or-create one step: two workers asking at once get one actor.

The actor is detached so that it outlives the worker that created it: a worker killed
mid-study (whose units then rerun) must not take its node's server down with it while other
workers are talking to it. Its name holds the node, the job and the entry's settings, so a
second study on the same cluster starts its own, and the driver kills its job's servers when
the executor closes (``stop_servers``). A driver killed outright (SIGKILL) leaves them
running: ``ray list actors --filter "name~=sim2human-embedded"`` finds them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import Embedded, serve_here

NAMESPACE = "sim2human"
PREFIX = "sim2human-embedded-"


class _NodeModel:
    """An actor holding one node's embedded server for its life."""

    def __init__(self, entry_json: str) -> None:
        entry = Embedded.model_validate_json(entry_json)
        self._stack = ExitStack()
        self._error: BaseException | None = None
        self._endpoint: EndpointConfig | None = None
        try:
            self._endpoint = self._stack.enter_context(serve_here(entry))
        except Exception as err:  # raised, as itself, to every worker that asks (endpoint)
            self._error = err

    def endpoint(self) -> str:
        """How to reach the server (an ``EndpointConfig`` as JSON)."""
        if self._error is not None:
            raise self._error
        assert self._endpoint is not None
        return self._endpoint.model_dump_json()

    def pid(self) -> int:
        return os.getpid()


def server_name(node_id: str, job_id: str, entry: Embedded) -> str:
    """The actor's name: its node, its job (study) and the entry's settings."""
    settings = hashlib.sha256(entry.model_dump_json().encode()).hexdigest()[:8]
    return f"{PREFIX}{node_id}-job{job_id}-{settings}"


def node_actor(entry: Embedded) -> Any:
    """This node's server actor for ``entry``: the existing one, or created here, on this
    node."""
    context = ray.get_runtime_context()
    node = context.get_node_id()
    return (
        ray.remote(_NodeModel)
        .options(
            name=server_name(node, context.get_job_id(), entry),
            namespace=NAMESPACE,
            get_if_exists=True,
            lifetime="detached",
            num_cpus=0,  # its threads are the model's; a worker's CPU slot stays a worker's
            max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
        )
        .remote(entry.model_dump_json())
    )


@contextmanager
def node_server(entry: Embedded) -> Iterator[EndpointConfig]:
    """The endpoint of this node's shared server (left running at the end of the block: the
    node's other workers use it; ``stop_servers`` stops it)."""
    yield EndpointConfig.model_validate_json(ray.get(node_actor(entry).endpoint.remote()))


def stop_servers() -> list[str]:
    """Kill this job's embedded servers, on every node; their names."""
    job = ray.get_runtime_context().get_job_id()
    stopped = []
    for actor in ray.util.list_named_actors(all_namespaces=True):
        name = actor.get("name", "")
        if actor.get("namespace") != NAMESPACE or not name.startswith(PREFIX):
            continue
        if f"-job{job}-" not in name:
            continue
        with suppress(Exception):  # already gone
            ray.kill(ray.get_actor(name, namespace=NAMESPACE))
            stopped.append(name)
    return stopped
