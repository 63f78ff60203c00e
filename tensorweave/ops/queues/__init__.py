"""Queues (white paper 4.6; OSDI 3.1): queue ops and the queue state kept in resource managers."""
