"""verify_memory's clauses with vectors: a long memory is far from a claim about one of its
clauses, so each candidate's clause closest to the claim is found by the model's similarity
and read against it (memory/verify_rules.py's rules_answer judges it alone)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from emergent_memory.embeddings.vectors import cosine_similarity
from emergent_memory.memory.dedup import content_words
from emergent_memory.memory.verify_features import clauses
from emergent_memory.memory.verify_rules import (
    Answer,
    Clause,
    PairFeatures,
    VerifyPolicy,
    read_pair,
    rules_answer,
)

if TYPE_CHECKING:
    from emergent_memory.embeddings.base import EmbeddingProvider

__all__ = ["answer_by_rules", "closest_clauses"]


# The clauses of one memory compared at most: those sharing the most content words with the
# claim (a memory of a thousand clauses costs no more than one of eight)
MAX_CLAUSES = 8


def closest_clauses(
    embedder: EmbeddingProvider,
    claim: str,
    contents: Sequence[str],
    query: Sequence[float] | None = None,
) -> list[Clause | None]:
    """Each memory's clause closest to the claim (verify_features.clauses; None for a memory
    of one clause, or an empty content: one not to read), with its cosine similarity to the
    claim (the claim embedded as a query, as recall does), the pair read and the clause; of a
    memory of more than MAX_CLAUSES clauses, only those sharing most words. One call of the
    embedder for every clause, and one for the claim unless `query` is its embedding already;
    raises EmbeddingUnavailable."""
    words = content_words(claim)
    parts = [_likeliest(clauses(content), words) for content in contents]
    texts = sorted({part for found in parts if len(found) > 1 for part in found})
    if not texts:
        return [None] * len(contents)
    if query is None:
        query = embedder.embed_query(claim)
    of_text = dict(zip(texts, embedder.embed_documents(texts), strict=True))
    closest: list[Clause | None] = []
    for found in parts:
        if len(found) < 2:
            closest.append(None)
            continue
        similarity, clause = max((cosine_similarity(query, of_text[p]), p) for p in found)
        closest.append(Clause(similarity, read_pair(clause, claim), clause))
    return closest


def _likeliest(found: tuple[str, ...], words: frozenset[str] | set[str]) -> tuple[str, ...]:
    """The MAX_CLAUSES clauses sharing the most content words with the claim, in order."""
    if len(found) <= MAX_CLAUSES:
        return found
    ranked = sorted(range(len(found)), key=lambda i: (-len(content_words(found[i]) & words), i))
    return tuple(found[i] for i in sorted(ranked[:MAX_CLAUSES]))


def answer_by_rules(
    policy: VerifyPolicy,
    text: str,
    pairs: Sequence[tuple[str, float | None]],
    features: Sequence[PairFeatures],
    closest: Callable[[list[str]], list[Clause | None] | None] | None,
) -> Answer:
    """The rules' answer for the candidates: whole memories (rules_answer), then, with
    `closest` (the memories' contents, "" for one already found to conflict, to each one's
    clause closest to the claim; None when it cannot tell), every memory not found to
    conflict also by that clause. benchmarks/verify_replay.py replays this on recorded
    candidates."""
    answer = rules_answer(policy, text, pairs, features)
    decided = {j.index for j in answer.judged if j.relation == "conflicts"}
    if closest is None or len(decided) == len(pairs):
        return answer
    clauses = closest([c if i not in decided else "" for i, (c, _) in enumerate(pairs)])
    if clauses is None:
        return answer
    return rules_answer(policy, text, pairs, features, clauses)
