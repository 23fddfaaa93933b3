"""``policy``: a small torch network over the act inventory, trained in-process by ``train.py``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from sim2human import outputs
from sim2human.agents.ask_once import HELD_BACK, AskOnce
from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.features import Featuriser
from sim2human.scenarios.capabilities import act_wording
from sim2human.scenarios.core import AnyScenario


class PolicyNet(nn.Module):
    """Actor and critic over the featurised observation; separate trunks keep PPO simple."""

    def __init__(
        self, n_in: int, n_acts: int, hidden: int = 128, ask_once: AskOnce | None = None
    ) -> None:
        super().__init__()
        self.ask_once = ask_once

        def trunk(n_out: int, gain: float) -> nn.Sequential:
            layers = nn.Sequential(
                nn.Linear(n_in, hidden),
                nn.Tanh(),
                nn.Linear(hidden, hidden),
                nn.Tanh(),
                nn.Linear(hidden, n_out),
            )
            for layer in layers:
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight, gain=np.sqrt(2))
                    nn.init.zeros_(layer.bias)
            last = layers[-1]
            assert isinstance(last, nn.Linear)
            nn.init.orthogonal_(last.weight, gain=gain)
            return layers

        self.actor = trunk(n_acts, 0.01)
        self.critic = trunk(1, 1.0)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The actor's act logits for feature rows ``x``, the acts ``ask_once`` holds back (if
        set) at ``HELD_BACK``: every user of the policy, PPO's minibatches included, sees the
        same choices."""
        out: torch.Tensor = self.actor(x)
        if self.ask_once is not None:
            out = out.masked_fill(self.ask_once(x), HELD_BACK)
        return out

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """The critic's value of feature rows ``x``."""
        out: torch.Tensor = self.critic(x)
        return out.squeeze(-1)


def log_prob(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Log-probability of ``actions`` under categorical ``logits`` (row-wise)."""
    return torch.log_softmax(logits, -1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the categorical distributions ``logits`` (row-wise)."""
    logp = torch.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def sample_each(logits: torch.Tensor, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """One index per row of categorical ``logits``, row i by inverse CDF on a uniform from
    ``rngs[i]``: no row's draw depends on the others."""
    cdf = torch.softmax(logits.double(), -1).cumsum(-1).numpy()
    return _pick(cdf, np.fromiter((r.random() for r in rngs), float, len(rngs)))


def _pick(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise inverse CDF: the index each uniform ``u`` (scaled to the row's total) falls at."""
    picked: np.ndarray = np.minimum((cdf <= (u * cdf[:, -1])[:, None]).sum(-1), cdf.shape[1] - 1)
    return picked


class PolicyAgent:
    """Samples acts from a ``PolicyNet`` for a batch of observations."""

    name = "policy"

    def __init__(
        self,
        scenario: AnyScenario,
        net: PolicyNet | None = None,
        seed: int = 0,
        *,
        ask_once: bool = False,
    ) -> None:
        """``net``: shared weights (the rule is the net's own); else a fresh seeded net, with the
        ask-once rule (``agents.ask_once``) where ``ask_once``."""
        self.scenario = scenario
        self.featurise = Featuriser(scenario)
        self.acts = scenario.acts
        self._say = act_wording(scenario)
        if net is None:
            with torch.random.fork_rng(devices=[]):  # seeded weights, global RNG untouched
                torch.manual_seed(seed)
                rule = AskOnce(self.featurise, self.acts) if ask_once else None
                net = PolicyNet(self.featurise.size, len(self.acts), ask_once=rule)
        self.net = net
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Restart the sampling stream (evaluations replay the same draws)."""
        self.rng = np.random.default_rng(seed)

    def decide(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Acts sampled for feature rows ``x`` and their log-probabilities (sampled in numpy:
        cheaper than torch's per-call dispatch for a batch this small)."""
        with torch.inference_mode():
            logp = torch.log_softmax(self.net.logits(torch.from_numpy(x)), -1).numpy()
        actions = _pick(np.exp(logp).cumsum(-1), self.rng.random(len(x)))
        return actions, logp[np.arange(len(x)), actions]

    def value(self, x: np.ndarray) -> np.ndarray:
        """The critic's value of feature rows ``x``."""
        with torch.inference_mode():
            out: np.ndarray = self.net.value(torch.from_numpy(x)).numpy()
        return out

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Next turns for a batch of conversations, sampled from the policy's own generator."""
        actions, _ = self.decide(self.featurise(observations))
        return [self.turn(int(i), o) for i, o in zip(actions, observations, strict=True)]

    def act_each(
        self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator]
    ) -> list[AgentTurn]:
        """``act`` with each conversation's own generator (``agents.base.SamplingAgent``)."""
        with torch.no_grad():
            logits = self.net.logits(torch.from_numpy(self.featurise(observations)))
        idx = sample_each(logits, rngs)
        return [self.turn(int(i), o) for i, o in zip(idx, observations, strict=True)]

    def turn(self, index: int, obs: Observation) -> AgentTurn:
        """Act ``index`` said in the context of ``obs`` (its text rendered, its field known)."""
        act = self.acts[index]
        text = self._say(act, obs.view)
        field = obs.field_of(act)
        return AgentTurn(text=text, act=act.id, field=field)

    def save(self, path: Path, *, inside: Path | None = None) -> None:
        """Write the checkpoint atomically (``outputs.write_with``): a full disk is one line
        naming it, not torch's ``unexpected pos``, and an interrupted save leaves no torn file."""
        blob: dict[str, object] = {
            "state": self.net.state_dict(),
            "acts": [a.id for a in self.acts],
        }
        if self.net.ask_once is not None:  # only then: a checkpoint without the rule is unchanged
            blob["ask_once"] = True
        outputs.write_with(path, lambda f: torch.save(blob, f), inside=inside)

    @classmethod
    def load(cls, path: Path, scenario: AnyScenario, seed: int = 0) -> PolicyAgent:
        """A policy agent from a checkpoint ``save`` wrote; a checkpoint of another act inventory is
        refused; one saved with the ask-once rule keeps it."""
        blob = torch.load(path, weights_only=True)
        agent = cls(scenario, seed=seed, ask_once=bool(blob.get("ask_once", False)))
        if blob["acts"] != [a.id for a in agent.acts]:
            raise ValueError(f"{path}: checkpoint was trained on a different act inventory")
        agent.net.load_state_dict(blob["state"])
        return agent
