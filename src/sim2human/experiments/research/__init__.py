"""The research verbs over a finished run or an agent: stress, predictivity, human calls folded
in, an LLM agent's evaluation in units (``sim2human.experiments`` says which is which)."""
