"""verify_memory's answer, as types: the verdict, the matches and who decided.

Kept apart from the verify service (memory/verify.py, which re-exports them) and its rules,
so that the MCP server can declare the tool's output schema without importing the service,
the store or the rules' word lists before it answers `initialize` and `tools/list`.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from emergent_memory.memory.models import RecalledMemory

Verdict = Literal["confirmed", "related", "conflict", "new"]
Relation = Literal["confirms", "conflicts", "related"]
Judge = Literal["rules", "llm"]

VERIFY_DEFAULT_LIMIT, VERIFY_MAX_LIMIT = 5, 20


class VerifyMatch(RecalledMemory):
    """A memory the claim was compared with, as recall returns it, and what it is to the
    claim: `similarity` (cosine, or the share of words in common when `degraded`),
    `relation` and `why`."""

    similarity: float
    relation: Relation
    why: str


class VerifyResult(TypedDict):
    """verify_memory's answer: the verdict and why; the memories that confirm, conflict or
    relate (the closest first, at most `limit`); who decided (the rules or the LLM judge);
    `degraded` when the embedder was down (words only)."""

    verdict: Verdict
    why: str
    matches: list[VerifyMatch]
    judge: Judge
    degraded: bool
