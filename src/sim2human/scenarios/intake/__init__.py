"""The ``intake`` scenario: a phone intake of a patient (``scenario``: its fields and extractor,
which reads number-like values with ``scenarios.readers``), how patients phrase it (``speech``)
and its words (``voice``); its real patients (``replay``: ACI-Bench visits as replay members,
``replay_card``: a visit's hidden profile; both at the simulators' layer); families grounded in
those patients (``grounding``, at the experiments' layer); acts and vocabularies: ``data/``."""
