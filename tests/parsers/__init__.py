"""Incremental-call parsers written for testing ``tcr.adapters``: correct, and with bugs."""
