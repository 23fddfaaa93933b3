"""User simulators: who plays the user.

``base`` holds the ``Simulator`` protocol, a member's spec and its families' shape; ``kinds``
the table of kinds (how a member of each is built, what callers ask of it); each kind has its
module (``persona``, ``replay``, ``restyled``, ``llm``, ``human``). This file imports nothing:
a scenario's own replay module (``scenarios/intake/replay.py``) reads ``replay_corpus`` without
building the kinds table, which lists that scenario's corpus in turn.
"""
