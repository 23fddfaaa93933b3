"""What a study is and how one runs: its file, the world its sub-runs share, one sub-run,
the runner, and what it stores (``sim2human.experiments`` says which module is which)."""
