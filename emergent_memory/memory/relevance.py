"""Relevance: one number per (query, memory), from the hybrid evidence recall already computes.

Recall ranks by reciprocal-rank fusion, which orders memories but says nothing of whether any
of them matters: the best of a nonsense query's matches comes first too. Relevance is a
statement about one memory: the estimated chance, between 0 and 1, that it answers the query,
a logistic function of three pieces of evidence the recall row already holds:

- `similarity`: the cosine similarity of the query and the memory (0 when the vector branch
  did not find it, or there is no vector);
- `coverage`: the share of the query's distinctive words the memory contains, each word
  weighted by how rare it is among the memories the caller sees (idf: a word in more than
  the recall's candidates weighs nothing, one found nowhere the most), 1 when it contains
  every word. The full-text branch computes it (migration 0008) and folds it into the fused
  score, from which it is read back exactly: fused = lexical_weight * coverage / (rrf_k +
  lexical_rank) + vector_weight / (rrf_k + vector_rank). It is what finds an identifier, a
  number or a word of a language the embedding model cannot read;
- `gap`: how far the memory's similarity falls below that of the query's closest memory
  (0 for the closest): a memory that stands out from the rest is more likely the answer
  than one among many equally distant ones.

relevance = 1 / (1 + exp(-(intercept + a * similarity + b * coverage + c * gap)))

except that a query with nothing in common with the memories has relevance 0 for every one of
them: when no candidate shares a word with it (coverage 0 for all) and even the closest is
less similar than `wordless_similarity` ("xyzzy frobnicate", "how do I bake sourdough bread"
in a store about code). That floor is calibrated too: the highest similarity below which no
labelled query whose answer recall finds shares no word with its candidates.

The weights are fitted per embedding model by logistic regression on the labelled prompt sets
(benchmarks/injection.py, benchmarks/README.md section 6), so a relevance of 0.8 means that
about 8 in 10 memories scored so were relevant there. Two floors are calibrated on them: what
recall, REST search and the dashboard return (permissive: the caller asked, and judges), and
what is injected into a prompt unasked (precision first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from emergent_memory.errors import InvalidInput


class Evidence(Protocol):
    """What relevance reads of a recall row (store.RecallRow)."""

    @property
    def lexical_rank(self) -> int | None: ...
    @property
    def vector_rank(self) -> int | None: ...
    @property
    def similarity(self) -> float | None: ...
    @property
    def fused(self) -> float: ...


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """The weights of relevance for one embedding model, and its two calibrated floors."""

    intercept: float
    similarity: float
    coverage: float
    gap: float
    recall_floor: float
    injection_floor: float
    # below this similarity of the closest memory, a query that shares no word with any
    # candidate has nothing relevant (see above)
    wordless_similarity: float = 0.0

    def of(self, similarity: float, coverage: float, gap: float) -> float:
        z = self.intercept + self.similarity * similarity + self.coverage * coverage
        z += self.gap * gap
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True, slots=True)
class Fusion:
    """The fusion's settings, which coverage is read back through (MemoryConfig's)."""

    rrf_k: int
    lexical_weight: float
    vector_weight: float


def coverage(row: Evidence, fusion: Fusion) -> float:
    """The idf-weighted share of the query's words the memory contains, read back from the
    fused score (0 when the full-text branch did not find it), within [0, 1]."""
    if row.lexical_rank is None or fusion.lexical_weight <= 0:
        return 0.0
    vector = 0.0
    if row.vector_rank is not None and row.similarity is not None:
        vector = fusion.vector_weight / (fusion.rrf_k + row.vector_rank)
    share = (row.fused - vector) * (fusion.rrf_k + row.lexical_rank) / fusion.lexical_weight
    return min(1.0, max(0.0, share))


class Ranked(Protocol):
    """What `weighed` reads of a recall row (store.RecallRow)."""

    @property
    def fused(self) -> float: ...
    @property
    def score(self) -> float: ...


R = TypeVar("R", bound=Ranked)


def weighed(row: Ranked, value: float) -> float:
    """A row's relevance `value` times what the search multiplied its fused score by (its
    effective confidence, recency and importance: migration 0013)."""
    return value * (row.score / row.fused) if row.fused > 0 else value


def most_relevant_first(rows: Sequence[R], judged: Sequence[float]) -> list[tuple[R, float]]:
    """Each row with its relevance, in the order recall and injection answer in: the highest
    `weighed` relevance first; rows weighed equal keep the search's order."""
    return sorted(zip(rows, judged, strict=True), key=lambda pair: -weighed(*pair))


def features(rows: Sequence[Evidence], fusion: Fusion) -> list[tuple[float, float, float]]:
    """(similarity, coverage, gap) of each row; the gap is measured from the closest row."""
    similarities = [0.0 if row.similarity is None else float(row.similarity) for row in rows]
    closest = max(similarities, default=0.0)
    return [
        (similarity, coverage(row, fusion), similarity - closest)
        for row, similarity in zip(rows, similarities, strict=True)
    ]


def relevances(rows: Sequence[Evidence], fusion: Fusion, model: RelevanceModel) -> list[float]:
    """Each row's relevance to the query (rows: one recall's, which holds the closest memory:
    read RELEVANCE_WINDOW rows or more)."""
    return scores(features(rows, fusion), model)


def scores(values: Sequence[tuple[float, float, float]], model: RelevanceModel) -> list[float]:
    """The relevance of each (similarity, coverage, gap) of one query's candidates: 0 for all
    when the query has nothing in common with them (no shared word, none close enough)."""
    if unanchored(values, model):
        return [0.0] * len(values)
    return [model.of(*value) for value in values]


def unanchored(values: Sequence[tuple[float, float, float]], model: RelevanceModel) -> bool:
    """No candidate shares a word with the query, and the closest is less similar than the
    model's wordless_similarity."""
    closest = max((similarity for similarity, _, _ in values), default=0.0)
    no_word = all(coverage <= 0 for _, coverage, _ in values)
    return no_word and closest < model.wordless_similarity


def caller_floor(value: object) -> float | None:
    """A caller's relevance floor (`min_relevance`): a number from 0 to 1; None: the
    calibrated one."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        shown = repr(value) if isinstance(value, int | float) else type(value).__name__
        raise InvalidInput(
            f"min_relevance must be a number from 0 to 1 (lower finds more); got {shown}"
        )
    return float(value)


# Rows a recall reads to judge relevance, however few it returns: the query's closest memory
# (vector rank 1) is among them, so each memory's gap is measured from it.
RELEVANCE_WINDOW = 20


# all-MiniLM-L6-v2 (the local model), fitted and calibrated by benchmarks/injection.py on
# benchmarks/data/retrieval.json and benchmarks/data/injection_prompts.json (README section 6).
LOCAL = RelevanceModel(
    intercept=-2.882,
    similarity=3.461,
    coverage=4.048,
    gap=10.715,
    recall_floor=0.004,
    injection_floor=0.449,
    wordless_similarity=0.2,
)
# Per embedding model; a model nobody calibrated gets the local model's weights, with no floor
# on recall and the local injection floor (its similarities are on another scale: what it
# injects is not measured).
CALIBRATED = {"sentence-transformers/all-MiniLM-L6-v2": LOCAL}
DEFAULT = LOCAL


def model_for(embedding_model: str) -> tuple[RelevanceModel, bool]:
    """The relevance model of `embedding_model`, and whether it was calibrated on it."""
    model = CALIBRATED.get(embedding_model)
    return (DEFAULT, False) if model is None else (model, True)
