"""``negotiation``: the campsite negotiation after CaSiNo (``scenario`` for the task, ``camper``
its users' moves); its real campers (``replay``: CaSiNo participants as replay members, at the
simulators' layer)."""
