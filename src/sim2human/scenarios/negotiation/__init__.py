"""``negotiation``: the campsite negotiation after CaSiNo (``scenario`` for the task)."""
