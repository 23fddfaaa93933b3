"""Agents: the ``Agent`` protocol, a scripted baseline and a trainable policy."""
