"""Experiments: orchestration over run directories, in three wings.

- ``study``: what a study is and how one runs: its file (``config``: every section), what of
  it this machine can play (``playable``), the study resolved once in its driver (``plan``),
  the world its sub-runs share (``world``), one sub-run
  (``condition``, ``lm_condition``, ``validation``), the runner (``runner``), and what it stores
  (``aggregate``, ``results``, ``result_rows``, ``wholeness``, ``trained_agents``,
  ``agent_record``, ``diversity``).
- ``executors``: where the work runs, whatever it is: the executor seam (``units``,
  ``backends``), the local pool (``pool``, ``local_executor``) and Ray (``ray_executor``,
  ``ray_embedded``, ``ray_watch``, ``fallback``).
- ``research``: the verbs over a finished run or an agent: ``stress``, ``predictivity``,
  ``human_eval``, an LLM agent's evaluation cut into units (``member_units``). The families
  fitted to intake's real patients are intake's (``scenarios.intake.grounding``).

``executors`` imports neither other wing; ``study`` runs its sub-runs on the executors;
``research`` reads studies and runs on the executors (``tests/test_layers.py`` holds them to it).
"""
