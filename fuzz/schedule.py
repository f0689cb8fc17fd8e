"""Which batches of the search a run takes: all of them, a shard's, or one worker's part of that.

The search is a sequence of Hypothesis runs ("batches") indexed 0, 1, 2, …, each
with its own seed derived from the run's seed, so a batch draws the same
examples wherever it runs. With ``max_examples`` there are
``ceil(max_examples / BATCH)`` batches, the last one short; with only a budget
the sequence is endless and a worker runs its batches until the time is up.

``--shard K/N`` takes the batches whose index is K-1 modulo N, and ``--jobs J``
deals a shard's batches to J workers in turn; so the shards and the workers of
a shard together run every batch of the search exactly once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count, islice

from tcr.shard import check_shard

__all__ = ["BATCH", "MUTATION_EVERY", "Batch", "batch_count", "batch_seed", "batches"]

BATCH = 250  # examples per Hypothesis run
MUTATION_EVERY = 4  # one batch in four mutates recordings (when there are any), the second


@dataclass(frozen=True, slots=True)
class Batch:
    """One Hypothesis run of the search."""

    index: int
    seed: int  # the Hypothesis seed, derived from the run's seed and the index
    limit: int  # examples at most
    mutates: bool  # mutates recordings (when there are any) rather than generating messages


def batch_seed(seed: int, index: int) -> int:
    digest = hashlib.sha256(f"tcr fuzz {seed} {index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def batches(
    seed: int,
    max_examples: int | None,
    *,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
    worker: int = 0,
) -> Iterator[Batch]:
    """The batches ``worker`` (0 ≤ worker < jobs) of ``shard`` runs, in order; endless without
    ``max_examples``."""
    k, n = check_shard(shard) if shard is not None else (1, 1)
    if not 0 <= worker < jobs:
        raise ValueError(f"worker {worker} of {jobs}")
    total = None if max_examples is None else -(-max_examples // BATCH)
    for index in islice(count(k - 1, n), worker, None, jobs):
        if total is not None and index >= total:
            return
        limit = BATCH if max_examples is None else min(BATCH, max_examples - index * BATCH)
        yield Batch(index, batch_seed(seed, index), limit, index % MUTATION_EVERY == 1)


def batch_count(max_examples: int | None, shard: tuple[int, int] | None = None) -> int | None:
    """How many batches ``shard`` has (``None``: endless, only a budget stops it)."""
    if max_examples is None:
        return None
    k, n = check_shard(shard) if shard is not None else (1, 1)
    return len(range(k - 1, -(-max_examples // BATCH), n))
