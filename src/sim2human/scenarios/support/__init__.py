"""``support``: a caller booking a restaurant, a hotel or a train, or changing a booking.

The task itself is a scenario file, no Python: ``scenario.yaml`` here, with its vocabularies
(``food.txt``, ``stations.txt``, ``times.txt``). ``replay`` holds what a file cannot say: its
real callers (MultiWOZ 2.1 bookings as replay members, at the simulators' layer).
"""
