"""The population wing (layer 3): who the simulated users of a study are, and how several of
them judge one episode.

- ``ensemble``: drawing train and held-out members from persona families;
- ``panel``: ensemble judging, every training episode re-scored by k other members.
"""
