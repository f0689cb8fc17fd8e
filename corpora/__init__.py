"""Bundled msgpack corpora, shipped as package data."""
