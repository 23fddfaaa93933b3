"""The ``intake`` scenario: a phone intake of a patient (``scenario``), its extractor
(``parsing``) and how patients phrase it (``speech``); words and acts: ``../data/intake/``."""
