"""The research verbs over a finished run, an agent or a corpus: stress, predictivity, human
calls folded in, families fitted to real people (``sim2human.experiments`` says which is which)."""
