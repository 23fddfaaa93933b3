"""The ``intake`` scenario: a phone intake of a patient (``scenario``: its fields and extractor,
which reads number-like values with ``scenarios.readers``) and how patients phrase it
(``speech``); words and acts: ``../data/intake/``."""
