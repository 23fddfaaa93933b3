"""Stress: severity sweeps with a robustness AUC (``sweep``) and the cheapest breaking mix
(``adversarial``). Their plain-words findings are the report's (``report/stress_findings.py``)."""
