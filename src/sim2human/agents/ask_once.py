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
    """Which acts are held back for each feature row (``Featuriser``'s layout).

    One product per call rather than indexing: the policy's logits are computed on every turn
    and every PPO minibatch, and torch's per-operation cost dominates at these sizes (measured:
    130 us for the indexed form at 32 rows, most of a forward pass). Each row's filled fields,
    and the same masked to the field asked last, times a 0/1 matrix saying which act each one
    holds back: exact in float32 (sums of a few ones)."""

    def __init__(self, featuriser: Featuriser, acts: tuple[Act, ...]) -> None:
        if featuriser.own is not None:
            raise ValueError(
                "agent.ask_once holds back asks for filled fields; this scenario has no fields "
                "(its view is its own, as a negotiation's)"
            )
        nf = len(featuriser.fields)
        self.n_fields = nf
        self.last = slice(3 * nf + 1, 4 * nf + 1)  # the field asked last, one-hot (none first)
        # rows: filled field k (k < nf), then "field k filled and asked last"; columns: acts
        self.holds = torch.zeros((2 * nf, len(acts)))
        for j, act in enumerate(acts):
            if act.kind == "ask" and act.field in featuriser.index:
                self.holds[featuriser.index[act.field], j] = 1
            elif act.kind == "clarify":
                self.holds[nf:, j] = 1

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """A boolean (rows, acts): True where the act would ask again for a filled field."""
        filled = x[:, : self.n_fields]
        both = torch.cat((filled, filled * x[:, self.last]), 1)
        held: torch.Tensor = (both @ self.holds) > 0.5
        return held
