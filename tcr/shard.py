"""``--shard K/N``: one of N deterministic shares of a run, for CI matrices and batch schedulers.

``tcr replay`` deals out recordings and ``tcr fuzz`` the batches of its search;
either way the N shards together cover the whole run exactly once.
"""

from __future__ import annotations

from tcr.errors import TcrError

__all__ = ["check_shard", "parse_shard"]


def parse_shard(spec: str) -> tuple[int, int]:
    """``"2/3"`` → ``(2, 3)``; anything else is a ``TcrError`` naming the form."""
    k, sep, n = spec.partition("/")
    try:
        shard = (int(k), int(n))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise TcrError(f"--shard {spec!r}: expected K/N with 1 <= K <= N, e.g. 2/3")
    return shard


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    """``shard`` as given to a library function: ``(k, n)`` with ``1 <= k <= n``."""
    k, n = shard
    if not 1 <= k <= n:
        raise TcrError(f"shard {k}/{n}: expected K/N with 1 <= K <= N, e.g. 2/3")
    return shard
