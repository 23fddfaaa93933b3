"""Scenario files: a task written as YAML, no Python (``docs/guides/scenario-files.md``).

``schema`` is the file's keys (pydantic); ``lines`` finds the line of each key, so every problem
is one ``FILE:LINE`` message; ``load`` reads a file and its vocabularies, with ``checks`` (what
refers across keys) and ``hearing`` (each value heard as written); ``scenario`` is the loaded
file as a scenario of the slot-filling kit, which reads with ``reading``, ``markers`` (fields
sharing a vocabulary) and ``when`` (fields that apply to some profiles), and speaks with
``voice``.
"""
