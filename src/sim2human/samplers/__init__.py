"""Who plays the user next: the ``Sampler`` protocol, the ``SAMPLERS`` table (``build``) and the
adaptive samplers (``must``, ``plr``, ``evolve``; ``feedback`` holds what the trainer tells a
sampler after each update besides the finished episodes).
"""
