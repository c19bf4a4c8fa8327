"""Vectors as memory compares them: cosine similarity, defined for every pair of vectors.

The cosine of a vector without length (the zero vector, which a provider may give for a text
without words such as "!!!") is undefined; pgvector's distance `<=>` answers NaN for it. Here,
as in SQL's kb.cosine_similarity (migration 0014), such a vector is similar to nothing: its
similarity with anything is 0. A query vector without direction is not searched at all (the
vector branch would find nothing above its floor), so no answer ever holds NaN.

pgvector stores single-precision floats and sums their products in single precision, so a
vector whose sum of squares does not fit one (every value below about 1e-23, or one above
about 1e19) has no usable length there either; the mirror below computes as pgvector does, and
agrees with SQL on those vectors too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def _sums(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """a.b, a.a and b.b summed in single precision, as pgvector sums them."""
    x = np.asarray(a, dtype=np.float32)
    y = np.asarray(b, dtype=np.float32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return float(np.dot(x, y)), float(np.dot(x, x)), float(np.dot(y, y))


def has_direction(vector: Sequence[float]) -> bool:
    """Whether the vector points somewhere pgvector can tell: finite values whose sum of
    squares, in single precision, is neither 0 nor overflows."""
    if not all(math.isfinite(x) for x in vector):
        return False
    _, squares, _ = _sums(vector, vector)
    return 0 < squares < math.inf


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """1 minus pgvector's cosine distance (which keeps the cosine within [-1, 1]), and 0 where
    that distance is NaN (a vector without length, or whose length single precision cannot
    hold): the Python mirror of SQL's kb.cosine_similarity. They agree to about 1e-6 (the
    order of pgvector's single-precision sums differs)."""
    if len(a) != len(b):
        raise ValueError(f"vectors of different dimensions: {len(a)} and {len(b)}")
    if not all(math.isfinite(x) for x in (*a, *b)):
        return 0.0  # pgvector refuses such a vector; it is similar to nothing
    dot, norm_a, norm_b = _sums(a, b)
    # in double precision from here, as pgvector: similarity / sqrt(norm_a * norm_b)
    denominator = math.sqrt(norm_a * norm_b) if not math.isnan(norm_a * norm_b) else math.nan
    if math.isnan(denominator) or math.isnan(dot):
        return 0.0
    if denominator == 0:
        similarity = math.nan if dot == 0 else math.copysign(math.inf, dot)
    elif math.isinf(denominator):
        similarity = math.nan if math.isinf(dot) else 0.0
    else:
        similarity = dot / denominator
    if math.isnan(similarity):
        return 0.0
    return min(1.0, max(-1.0, similarity))
