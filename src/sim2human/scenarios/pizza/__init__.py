"""``pizza``: a three-field phone order, the smallest scenario in the catalog (``scenario``)."""
