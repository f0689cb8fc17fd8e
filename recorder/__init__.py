"""Capture from live backends (see issue: recorder)."""
