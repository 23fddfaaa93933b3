"""Intake's grounding tools: simulator families made from ACI-Bench's *train* patients, so a
study can test whether a family grounded in real people predicts them better.

``fit_family`` fits a persona family's traits to the patients' behaviour (``sim2human
fit-family``), ``fit_voice`` lets a fit's candidates say a restyle cache's lines,
``restyle_family`` rewrites the persona's lines in their words with a model (``sim2human
restyle-family``) and ``retrieve_family`` picks their own turns for each line (``sim2human
retrieve-family``). They serve intake on ACI-Bench only (intake's fields, its speech and voice,
the corpus's train split), so they live here, not among the research verbs that take any
scenario. They run studies, so they sit at the experiments' layer (``tests/test_layers.py``).
"""
