"""Summaries and event files (white paper section 9): reading event files for now; the summary
ops and FileWriter join here."""
