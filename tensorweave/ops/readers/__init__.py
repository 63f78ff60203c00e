"""Readers (white paper 4.5): reader ops and the reader state kept in resource managers."""
