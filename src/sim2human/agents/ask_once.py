"""The ask-once rule: a policy that never asks again for a field its record already holds.

Why a rule and not only a handle-time cost: trained agents asked again for a field they held 1.5
times a held-out intake call (the scripted rule never does), and the caller mostly said the same
again (`docs/results/collapse.md`, "A turn above the reference"). A cost high enough to train
that away lost seeds on unseen train visits. Holding the ask back is what a person at a desk
does: what they wrote down they read back (``confirm``) rather than ask for again, and a caller
who corrects an answer is heard without being asked (the scenario's record takes the
correction). So the policy's choices leave out every ``ask`` act for a filled field and a
``clarify`` of a field that is filled; everything else stays open, so a choice always remains.

The rule reads the featuriser's own rows (which fields are filled, which was asked last), so
PPO's minibatches apply it from the stored observations alone, and a saved policy carries it
(``PolicyAgent.save``): the same choices in training, evaluation and behind ``human serve``.
"""

from __future__ import annotations

import torch

from sim2human.agents.features import Featuriser
from sim2human.scenarios.core import Act

HELD_BACK = -1e9
"""The logit a held-back act gets: a probability of exactly 0 in float32, and unlike ``-inf``
no ``0 * inf`` in the entropy."""


class AskOnce:
    """Which acts are held back for each feature row (``Featuriser``'s layout)."""

    def __init__(self, featuriser: Featuriser, acts: tuple[Act, ...]) -> None:
        if featuriser.own is not None:
            raise ValueError(
                "agent.ask_once holds back asks for filled fields; this scenario has no fields "
                "(its view is its own, as a negotiation's)"
            )
        nf = len(featuriser.fields)
        index = featuriser.index
        asks = [
            (j, index[a.field]) for j, a in enumerate(acts) if a.kind == "ask" and a.field in index
        ]
        self.n_fields = nf
        self.n_acts = len(acts)
        self.asks = torch.tensor([j for j, _ in asks], dtype=torch.long)
        self.fields = torch.tensor([f for _, f in asks], dtype=torch.long)
        self.clarify = torch.tensor([j for j, a in enumerate(acts) if a.kind == "clarify"])
        self.last = slice(3 * nf + 1, 4 * nf + 1)  # the field asked last, one-hot (none first)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """A boolean (rows, acts): True where the act would ask again for a filled field."""
        filled = x[:, : self.n_fields] > 0.5
        held = torch.zeros((x.shape[0], self.n_acts), dtype=torch.bool)
        held[:, self.asks] = filled[:, self.fields]
        last_filled = (x[:, self.last] > 0.5) & filled
        held[:, self.clarify] = last_filled.any(1, keepdim=True)
        return held
