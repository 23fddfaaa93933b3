"""``support``: a caller booking a restaurant, a hotel or a train, or changing a booking.

The task itself is a scenario file, no Python (``../data/support/scenario.yaml`` and its
vocabularies); this folder holds what a file cannot say: its real callers (``replay``: MultiWOZ
2.1 bookings as replay members, at the simulators' layer).
"""
