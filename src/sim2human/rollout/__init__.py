"""Playing conversations: the conversation core, lock-step and async engines, evaluation.

No I/O here: a rollout opens no endpoint and writes no file.
"""
