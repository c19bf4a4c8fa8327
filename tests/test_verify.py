"""verify_memory (memory/verify.py): each answer with the real local model, isolation, no
writes, bad input, the LLM judge through the real SDK against a fake Messages API, and the
labelled set's accuracy floor."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from emergent_memory.app import DEDUP_POLICIES, VERIFY_POLICIES
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.memory import MemoryService
from emergent_memory.memory.verify import VerifyConfig, VerifyService

POLICY = VERIFY_POLICIES[LOCAL_MODEL_NAME]

MEMORIES = [
    ("The API service listens on port 8080 in local development.", "fact"),
    ("The project uses PostgreSQL 16 with the pgvector extension.", "fact"),
    ("The user prefers double quotes for strings in Python.", "preference"),
    ("The CI pipeline runs on GitHub Actions.", "fact"),
    ("Deploys to production happen on Tuesdays after the standup.", "convention"),
]


@pytest.fixture
def semantic(
    make_service: Callable[..., MemoryService], local_embedder: LocalEmbeddings
) -> MemoryService:
    policy = DEDUP_POLICIES[LOCAL_MODEL_NAME]
    return make_service(
        local_embedder,
        dedup_threshold=policy.threshold,
        dedup_text_rule_from=policy.text_rule_from,
        dedup_named_change_from=policy.named_change_from,
        dedup_latin_only_model=policy.latin_only_model,
    )


@pytest.fixture
def verifier(semantic: MemoryService) -> VerifyService:
    return VerifyService(semantic, None, VerifyConfig(policy=POLICY))


def seed(service: MemoryService, principal: Principal) -> dict[str, str]:
    return {
        content: service.save(principal, content, category)["memory"]["id"]
        for content, category in MEMORIES
    }


@pytest.mark.parametrize(
    ("claim", "verdict", "memory"),
    [
        ("The API service runs on port 8080 when developing locally.", "confirmed", 0),
        ("The API service listens on port 3000 in local development.", "conflict", 0),
        ("The project uses PostgreSQL 14 with the pgvector extension.", "conflict", 1),
        ("The user prefers single quotes for strings in Python.", "conflict", 2),
        ("GitHub Actions caches the pip downloads between CI runs.", "related", 3),
        ("The user is allergic to peanuts.", "new", None),
    ],
)
def test_each_answer(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    claim: str,
    verdict: str,
    memory: int | None,
) -> None:
    ids = seed(semantic, principal)
    result = verifier.verify(principal, claim)
    assert result["verdict"] == verdict, result["why"]
    assert result["judge"] == "rules"
    assert result["degraded"] is False
    if memory is None:
        assert result["matches"] == []
    else:
        [best, *_] = result["matches"]
        assert best["id"] == ids[MEMORIES[memory][0]]
        assert best["relation"] == {"confirmed": "confirms", "conflict": "conflicts"}.get(
            verdict, "related"
        )
