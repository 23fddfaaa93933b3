"""Adapters that put sim2human's simulator populations into other trainers.

Each adapter lives in its own module behind its own extra, and nothing here imports one at
package import time:

- ``gym``: a ``gymnasium.Env`` over one conversation (Stable-Baselines3, CleanRL ...);
  ``pip install 'sim2human[gym]'``.
- ``trl``: an ``environment_factory`` class and a dataset builder for TRL's ``GRPOTrainer``;
  ``pip install 'sim2human[trl]'``.
- ``verl``: an ``AgentLoopBase`` subclass for verl's agent loop; ``sim2human[verl]``.
- ``art``: a rollout function returning ``art.Trajectory`` for OpenPipe ART; ``sim2human[art]``.
- ``collapse_callback``: a TRL ``TrainerCallback`` that plays the policy on held-out families
  and real callers every N steps, logs the numbers, stores a run directory and can stop
  training on collapse (the rule: ``collapse_rule``); ``sim2human[trl]``.
- ``export``: stored episodes as OpenAI-style chats, ART trajectories or an SB3 replay buffer.

Shared by all of them: ``population`` (who plays the user next), ``chat`` (episodes as chat
messages) and ``runlog`` (episodes written as a run directory that ``sim2human report`` and
``sim2human diagnose`` read).
"""
