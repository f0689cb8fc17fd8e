"""Textual step debugger for the detector state machine (see issue: tui)."""
