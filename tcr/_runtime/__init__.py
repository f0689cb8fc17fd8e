"""Infrastructure the adapters share: process pools, a background event loop, report files.

None of it belongs to the pure core (ARCHITECTURE.md §1): it starts processes and
threads and writes files, for replay, fuzz, the recorder and ``tcr serve``.
"""
