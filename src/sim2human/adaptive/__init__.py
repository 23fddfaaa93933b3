"""Samplers that adapt while training runs: ``must``, ``plr`` and ``evolve``.

``samplers.build_sampler`` looks them up by name; ``feedback`` holds what the trainer tells a
sampler after each update besides the finished episodes.
"""
