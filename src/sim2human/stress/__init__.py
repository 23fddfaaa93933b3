"""Stress: severity sweeps with a robustness AUC (``sweep``), the cheapest breaking mix
(``adversarial``) and the plain-words findings stored in stress.json (``findings``)."""
