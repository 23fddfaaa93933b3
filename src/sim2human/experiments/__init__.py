"""Experiments: orchestration over run directories. The study config (``config``), one
sub-run and the aggregate (``study``), the runner and its worker processes (``runner``,
``executors``), stress over a run (``stress``) and human calls folded in (``human_eval``)."""
