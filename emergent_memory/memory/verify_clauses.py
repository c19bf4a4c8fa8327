"""verify_memory's clauses with vectors: a long memory is far from a claim about one of its
clauses, so each candidate's clause closest to the claim is found by the model's similarity
and read against it (memory/verify_rules.py's rules_answer judges it alone)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from emergent_memory.embeddings.vectors import cosine_similarity
from emergent_memory.memory.verify_features import clauses
from emergent_memory.memory.verify_rules import Clause, read_pair

if TYPE_CHECKING:
    from emergent_memory.embeddings.base import EmbeddingProvider

__all__ = ["closest_clauses"]


def closest_clauses(
    embedder: EmbeddingProvider, claim: str, contents: Sequence[str]
) -> list[Clause | None]:
    """Each memory's clause closest to the claim (verify_features.clauses; None for a memory
    of one clause), with its cosine similarity to the claim (as recall measures it) and the
    pair read. One call of the embedder for all of them; raises EmbeddingUnavailable."""
    parts = [clauses(content) for content in contents]
    texts = sorted({part for found in parts if len(found) > 1 for part in found})
    if not texts:
        return [None] * len(contents)
    vectors = embedder.embed_documents([claim, *texts])
    query, of_text = vectors[0], dict(zip(texts, vectors[1:], strict=True))
    closest: list[Clause | None] = []
    for found in parts:
        if len(found) < 2:
            closest.append(None)
            continue
        similarity, clause = max((cosine_similarity(query, of_text[p]), p) for p in found)
        closest.append((similarity, read_pair(clause, claim)))
    return closest
