"""Vectors as memory compares them: cosine similarity, defined for every pair of vectors.

The cosine of a vector without length (the zero vector, which a provider may give for a text
without words such as "!!!") is undefined; pgvector's distance `<=>` answers NaN for it. Here,
as in SQL's kb.cosine_similarity (migration 0014), such a vector is similar to nothing: its
similarity with anything is 0. A query vector without direction is not searched at all (the
vector branch would find nothing above its floor), so no answer ever holds NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def has_direction(vector: Sequence[float]) -> bool:
    """Whether the vector points somewhere: finite values, not all zero."""
    finite = all(math.isfinite(x) for x in vector)
    return finite and any(x != 0 for x in vector)


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """1 minus pgvector's cosine distance (which keeps the cosine within [-1, 1]), and 0 when
    either vector has no direction (where that distance is NaN): the Python mirror of SQL's
    kb.cosine_similarity (pgvector sums in single precision: they agree to about 1e-6)."""
    if len(a) != len(b):
        raise ValueError(f"vectors of different dimensions: {len(a)} and {len(b)}")
    if not (has_direction(a) and has_direction(b)):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return min(1.0, max(-1.0, dot / norms))
