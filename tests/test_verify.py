"""verify_memory (memory/verify.py): each answer with the real local model and the calibrated
policy, isolation, no use counted and nothing written, bad input, words only when the embedder
is down, the LLM judge through the real `anthropic` SDK against a fake Messages API, and the
labelled set's accuracy floor."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from emergent_memory import app
from emergent_memory.app import DEDUP_POLICIES, VERIFY_POLICIES
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.errors import (
    EmbeddingUnavailable,
    InvalidInput,
    PermissionDenied,
    SecretRejected,
)
from emergent_memory.llm import AnthropicClient
from emergent_memory.memory import MemoryConfig, MemoryService, verify_features
from emergent_memory.memory.models import Category
from emergent_memory.memory.secrets import describe_secret, find_secrets
from emergent_memory.memory.verify import (
    JUDGE_TOOL,
    VerifyConfig,
    VerifyService,
    read_pair,
    rules_answer,
)
from emergent_memory.memory.verify_rules import Clause
from emergent_memory.settings import load_settings
from tests.embedders import BagOfWordsEmbedder, DownEmbedder
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, error, text, tool_use

POLICY = VERIFY_POLICIES[LOCAL_MODEL_NAME]
RULES_ONLY = replace(POLICY, judge_bands=())
LABELLED = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "verify_claims.json"

MEMORIES: list[tuple[str, Category]] = [
    ("The API service listens on port 8080 in local development.", "fact"),
    ("The project uses PostgreSQL 16 with the pgvector extension.", "fact"),
    ("The user prefers double quotes for strings in Python.", "preference"),
    ("The CI pipeline runs on GitHub Actions.", "fact"),
    ("Deploys to production happen on Tuesdays after the standup.", "convention"),
    ("The user's editor is Neovim with the LazyVim distribution.", "preference"),
]
# Its best candidate (the editor memory) is at 0.56, in a judge band (0.55 to 0.65), where
# the rules call it related: the LLM judge decides there.
IN_A_BAND = "The user's editor is VS Code."


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
def test_each_answer_names_the_memory_it_follows(
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
    assert result["judge"] == "rules"  # no LLM configured
    assert result["degraded"] is False
    if memory is None:
        assert result["matches"] == []
        return
    [best, *_] = result["matches"]
    assert best["id"] == ids[MEMORIES[memory][0]]
    assert best["content"] == MEMORIES[memory][0]
    relation = {"confirmed": "confirms", "conflict": "conflicts"}.get(verdict, "related")
    assert best["relation"] == relation
    assert 0 < best["similarity"] <= 1
    assert best["why"]
    assert [m["similarity"] for m in result["matches"]] == sorted(
        (m["similarity"] for m in result["matches"]), reverse=True
    )


# Negations in other words than the memory's: few of its words in its order, so the general
# rule (conflict_from with conflict_frame) called them related; a negation conflicts from its
# own threshold (benchmarks/verify.py, calibrate_kinds).
@pytest.mark.parametrize(
    ("claim", "memory"),
    [
        ("Production deploys never happen on Tuesdays.", 4),
        ("The project doesn't use pgvector.", 1),
        ("The user does not edit code in Neovim.", 5),
    ],
)
def test_a_negation_in_other_words_conflicts(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    claim: str,
    memory: int,
) -> None:
    ids = seed(semantic, principal)
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "conflict", result["why"]
    [best, *_] = result["matches"]
    assert best["id"] == ids[MEMORIES[memory][0]]
    assert "negates" in best["why"]
    general = replace(RULES_ONLY, conflict_from_kind=(), denies_from=1.0)
    before = VerifyService(semantic, None, VerifyConfig(policy=general)).verify(principal, claim)
    assert before["verdict"] == "related", before["why"]


@pytest.mark.parametrize(
    ("claim", "answer"),
    [
        ("Omar is the on-call engineer for analytics.", "conflict"),
        ("Kofi is the DRI for the ledger migration.", "conflict"),
        ("Ada's line manager is Carmen.", "conflict"),
        ("Releases of dockd need Isolde's sign-off.", "confirmed"),
        ("Ben is Ada's manager.", "confirmed"),
    ],
)
def test_who_holds_a_role_is_read_as_save_reads_it(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    claim: str,
    answer: str,
) -> None:
    """Another person in a role one person holds for the same thing conflicts, the same
    person said in other words confirms (dedup.role_given_to_another, role_restated)."""
    for content in (
        "The analytics on-call engineer is Nadia.",
        "Priya is accountable for the ledger migration.",
        "Ada reports to Ben.",
        "Isolde signs off on dockd releases.",
        "Analytics dashboards refresh every 15 minutes.",
    ):
        semantic.save(principal, content, "fact")
    result = verifier.verify(principal, claim)
    assert result["verdict"] == answer, result["why"]
    assert "same role" in result["matches"][0]["why"]


def test_a_conflict_says_which_values_differ(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    seed(semantic, principal)
    result = verifier.verify(
        principal, "The API service listens on port 3000 in local development."
    )
    assert "8080" in result["matches"][0]["why"]
    assert "3000" in result["matches"][0]["why"]


def test_limit_category_and_scope_filter_the_matches(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    seed(semantic, principal)
    claim = "The API service runs on port 8080 when developing locally."
    assert len(verifier.verify(principal, claim, limit=1)["matches"]) == 1
    # the confirming memory is a fact: among preferences nothing confirms it
    assert verifier.verify(principal, claim, category="preference")["verdict"] != "confirmed"
    assert verifier.verify(principal, claim, scope="project")["verdict"] == "new"


def test_another_actors_memories_never_count(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    claims = [
        "The API service listens on port 8080 in local development.",  # theirs exactly
        "The API service listens on port 3000 in local development.",  # another value
        "GitHub Actions caches the pip downloads between CI runs.",
    ]
    alone = [verifier.verify(principal, claim) for claim in claims]
    other = Principal(uuid.uuid4(), principal.project_id)  # same project
    for content, category in MEMORIES:
        semantic.save(other, content, category, scope="project")
    for claim, before in zip(claims, alone, strict=True):
        after = verifier.verify(principal, claim)
        assert after == before
        assert after["verdict"] == "new"
        assert after["matches"] == []


def kb_row_counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Rows in every table of the kb schema."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'kb' ORDER BY tablename"
        )
    ]
    counts = {}
    for table in tables:
        query = sql.SQL("SELECT count(*) FROM kb.{}").format(sql.Identifier(table))
        row = conn.execute(query).fetchone()
        assert row is not None
        counts[table] = int(row[0])
    return counts


def test_verify_writes_nothing_and_counts_no_use(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    ids = seed(semantic, principal)
    conn = connect()
    before = kb_row_counts(conn)
    for claim in (
        "The API service runs on port 8080 when developing locally.",
        "The API service listens on port 3000 in local development.",
        "GitHub Actions caches the pip downloads between CI runs.",
        "The user is allergic to peanuts.",
    ):
        result = verifier.verify(principal, claim)
        assert all(match["use_count"] == 0 for match in result["matches"])
    assert kb_row_counts(conn) == before
    listed = semantic.list_memories(principal)["memories"]
    assert {m["id"] for m in listed} == set(ids.values())
    assert all(m["use_count"] == 0 and m["last_used"] is None for m in listed)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"claim": ""}, "claim is empty"),
        ({"claim": "   "}, "claim is empty"),
        ({"claim": 42}, "claim must be a string"),
        ({"claim": "x" * 2001}, "claim is 2001 characters long"),
        ({"claim": "a\x00b"}, "NUL"),
        ({"claim": "fine", "category": "opinion"}, "category must be one of"),
        ({"claim": "fine", "scope": "team"}, "scope must be one of"),
        ({"claim": "fine", "limit": 0}, "limit must be from 1 to 20"),
        ({"claim": "fine", "limit": 21}, "limit must be from 1 to 20"),
        ({"claim": "fine", "limit": "5"}, "limit must be a whole number"),
    ],
)
def test_bad_input_is_refused(
    verifier: VerifyService, principal: Principal, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        verifier.verify(principal, **arguments)


def test_a_claim_holding_a_secret_is_refused_as_save_refuses_it(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    claim = "The deploy key is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(SecretRejected) as saved:
        semantic.save(principal, claim, "fact")
    with pytest.raises(SecretRejected, match="refusing to verify this claim") as verified:
        verifier.verify(principal, claim)
    # the same finding named, the secret itself never
    finding = describe_secret(find_secrets(claim)[0])
    assert finding in str(saved.value)
    assert finding in str(verified.value)
    assert "a1B2c3D4" not in str(verified.value)


def test_a_credential_without_read_may_not_verify(verifier: VerifyService) -> None:
    nobody = Principal(uuid.uuid4(), uuid.uuid4(), frozenset())
    with pytest.raises(PermissionDenied, match="memory:read"):
        verifier.verify(nobody, "The API service listens on port 8080.")


class _CountedDown(DownEmbedder):
    """An unreachable provider that counts the queries it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(text)


def test_without_vectors_the_words_are_compared_and_it_says_so(
    semantic: MemoryService,
    make_service: Callable[..., MemoryService],
    principal: Principal,
) -> None:
    seed(semantic, principal)
    embedder = _CountedDown()
    down = VerifyService(make_service(embedder), None, VerifyConfig(policy=POLICY))
    confirmed = down.verify(principal, "The CI pipeline runs on GitHub Actions.")
    assert confirmed["degraded"] is True
    # the claim's embedding is tried once: recall does not wait for the outage a second time
    assert embedder.queries == 1
    assert confirmed["verdict"] == "confirmed"
    assert "only the words were compared" in confirmed["why"]
    conflict = down.verify(principal, "The API service listens on port 3000 in local development.")
    assert conflict["verdict"] == "conflict"
    assert down.verify(principal, "The user is allergic to peanuts.")["verdict"] == "new"


# -- the LLM judge ------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key="test-key") as server:
        yield server


def judge_for(
    semantic: MemoryService, fake: FakeAnthropic, **config: Any
) -> Iterator[VerifyService]:
    llm = AnthropicClient(api_key="test-key", base_url=fake.url, timeout=10, max_retries=0)
    try:
        yield VerifyService(semantic, llm, VerifyConfig(policy=POLICY, **config))
    finally:
        llm.close()


@pytest.fixture
def judged(semantic: MemoryService, fake: FakeAnthropic) -> Iterator[VerifyService]:
    yield from judge_for(semantic, fake, judge_model="claude-judge")


def verify_calls(
    connect: Callable[[], psycopg.Connection[Any]], principal: Principal
) -> list[tuple[Any, ...]]:
    with connect() as conn:
        return conn.execute(
            "SELECT purpose, model, input_tokens, output_tokens, outcome, error, window_id "
            "FROM kb.llm_calls WHERE actor_id = %s ORDER BY created_at",
            (principal.actor_id,),
        ).fetchall()


def test_the_rules_place_the_band_claim_in_a_band(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    seed(semantic, principal)
    result = verifier.verify(principal, IN_A_BAND)
    assert POLICY.in_judge_band(result["matches"][0]["similarity"])
    assert result["verdict"] == "related"  # what the judge gets to overrule


def test_in_a_band_the_llm_judge_decides_and_its_call_is_recorded(
    judged: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    ids = seed(semantic, principal)

    def answer(request: RecordedRequest) -> Reply:
        assert request.forced_tool == JUDGE_TOOL.name
        listed = request.text.split("<memories>")[1]
        number = next(
            int(line.split(".")[0])
            for line in listed.splitlines()
            if line.endswith("Neovim with the LazyVim distribution.")
        )
        return tool_use(
            JUDGE_TOOL.name,
            {
                "memories": [
                    {"number": number, "relation": "conflicts", "why": "another editor"},
                    {"number": 99, "relation": "confirms", "why": "not listed: ignored"},
                ]
            },
            input_tokens=120,
            output_tokens=30,
        )

    fake.handler = answer
    result = judged.verify(principal, IN_A_BAND)
    assert result["judge"] == "llm"
    assert result["verdict"] == "conflict"
    assert result["why"] == "the LLM judge: another editor"
    [match] = result["matches"]
    assert match["id"] == ids[MEMORIES[5][0]]
    assert (match["relation"], match["why"]) == ("conflicts", "LLM judge: another editor")
    [request] = fake.message_requests
    assert request.model == "claude-judge"
    assert IN_A_BAND in request.text
    assert verify_calls(connect, principal) == [
        ("verify", "claude-judge", 120, 30, "ok", None, None)
    ]


def test_the_judge_keeps_the_rules_conflicts_of_memories_it_was_not_shown(
    judged: VerifyService, principal: Principal, fake: FakeAnthropic
) -> None:
    # a memory too far from the claim as a whole to be shown to the judge (0.20), whose
    # clause the rules found to contradict the claim: that conflict stands beside the judge's
    fake.handler = lambda _request: tool_use(
        JUDGE_TOOL.name, {"memories": [{"number": 1, "relation": "related", "why": "same app"}]}
    )
    claim = "Feature flags live in Unleash."
    pairs = [
        ("The mobile app is built with Flutter.", 0.6),
        ("The app ships every two weeks; feature flags live in LaunchDarkly.", 0.2),
    ]
    rules = rules_answer(
        RULES_ONLY,
        claim,
        pairs,
        clauses=[
            None,
            Clause(0.72, read_pair("feature flags live in LaunchDarkly", claim), "..."),
        ],
    )
    assert rules.verdict == "conflict"
    answer, judge = judged._judged(principal, claim, pairs, rules)
    assert judge == "llm"
    assert answer.verdict == "conflict"
    assert {(j.index, j.relation) for j in answer.judged} == {(0, "related"), (1, "conflicts")}
    [request] = fake.message_requests
    assert "LaunchDarkly" not in request.text  # not shown to the judge


def test_outside_the_bands_the_judge_is_not_asked(
    judged: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    seed(semantic, principal)
    for claim in (
        "The API service listens on port 3000 in local development.",  # 0.9 and more
        "The user is allergic to peanuts.",  # nothing close
    ):
        result = judged.verify(principal, claim)
        assert result["judge"] == "rules"
        assert not POLICY.in_judge_band(
            max((m["similarity"] for m in result["matches"]), default=None)
        )
    assert fake.message_requests == []
    assert verify_calls(connect, principal) == []


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (error(529, "overloaded_error", "Overloaded"), "HTTP 529 overloaded_error"),
        (error(401, "authentication_error", "invalid x-api-key"), "HTTP 401"),
        (text("It conflicts."), "no call of tool 'record_verification'"),
        (tool_use("record_verification", {"memories": "all"}), "does not match its schema"),
    ],
)
def test_any_failure_of_the_judge_keeps_the_rules_answer_and_says_why(
    judged: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
    reply: Reply,
    reason: str,
) -> None:
    seed(semantic, principal)
    rules = VerifyService(semantic, None, VerifyConfig(policy=POLICY)).verify(principal, IN_A_BAND)
    fake.enqueue(reply)
    result = judged.verify(principal, IN_A_BAND)
    assert result["judge"] == "rules"
    assert (result["verdict"], result["matches"]) == (rules["verdict"], rules["matches"])
    assert result["why"].startswith(rules["why"] + "; by the rules: the LLM judge failed (")
    assert reason in result["why"]
    [(purpose, _, _, _, outcome, error_, _)] = verify_calls(connect, principal)
    assert (purpose, outcome) == ("verify", "error")
    assert reason in error_


def test_with_the_daily_budget_spent_the_judge_is_not_asked(
    semantic: MemoryService,
    principal: Principal,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    seed(semantic, principal)
    for verifier in judge_for(semantic, fake, daily_token_budget=0):
        result = verifier.verify(principal, IN_A_BAND)
        assert result["judge"] == "rules"
        assert "the daily LLM token budget (0) is spent" in result["why"]
    assert fake.message_requests == []
    assert verify_calls(connect, principal) == []


def test_without_bands_or_without_a_key_there_is_no_judge(
    semantic: MemoryService, fake: FakeAnthropic
) -> None:
    for verifier in judge_for(semantic, fake):
        assert verifier.judge_enabled
    assert not VerifyService(semantic, None, VerifyConfig(policy=POLICY)).judge_enabled
    llm = AnthropicClient(api_key="test-key", base_url=fake.url, timeout=10, max_retries=0)
    with llm:
        assert not VerifyService(semantic, llm, VerifyConfig(policy=RULES_ONLY)).judge_enabled


# -- the labelled set ---------------------------------------------------------------------

# benchmarks/results/verify.md: held out 0.87 (macro 0.87), calibration 0.94; every claim
# together about 0.92. The floor leaves room for the recall's ranking to move a little.
ACCURACY_FLOOR = 0.85
PER_ANSWER_FLOOR = 0.7


def test_the_labelled_claims_stay_above_the_accuracy_floor(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    data = json.loads(LABELLED.read_text())
    counts = Counter(claim["verdict"] for claim in data["claims"])
    assert len(data["claims"]) >= 200
    assert min(counts.values()) >= 40
    for memory in data["memories"]:
        semantic.save(principal, memory["content"], memory["category"], scope=memory["scope"])
    # (another actor's memories change nothing: test_another_actors_memories_never_count)
    right: Counter[str] = Counter()
    for claim in data["claims"]:
        result = verifier.verify(principal, claim["claim"])
        right[claim["verdict"]] += result["verdict"] == claim["verdict"]
    assert sum(right.values()) / len(data["claims"]) >= ACCURACY_FLOOR, right
    for answer, total in counts.items():
        assert right[answer] / total >= PER_ANSWER_FLOOR, (answer, right)


def test_the_composition_root_gives_the_judge_only_with_a_key(
    semantic: MemoryService, make_service: Callable[..., MemoryService], fake: FakeAnthropic
) -> None:
    without = load_settings({})
    with app.verify_service(without, semantic) as verifier:
        assert not verifier.judge_enabled
        assert verifier.config.policy == POLICY  # the local model's calibrated bands
    keyed = load_settings(
        {
            "EMERGENT_MEMORY_ANTHROPIC_API_KEY": "test-key",
            "EMERGENT_MEMORY_ANTHROPIC_BASE_URL": fake.url,
            "EMERGENT_MEMORY_CAPTURE_GATE_MODEL": "claude-gate",
            "EMERGENT_MEMORY_CAPTURE_DAILY_TOKEN_BUDGET": "5000",
            "EMERGENT_MEMORY_MAX_CONTENT_LENGTH": "900",
        }
    )
    with app.verify_service(keyed, semantic) as verifier:
        assert verifier.judge_enabled
        config = verifier.config
        assert (config.judge_model, config.daily_token_budget) == ("claude-gate", 5000)
        assert config.max_claim_length == 900
        with pytest.raises(InvalidInput, match="the limit is 900"):
            verifier.verify(Principal(uuid.uuid4(), uuid.uuid4()), "x" * 901)
    # a model nobody calibrated: close matches only, and never the judge
    with app.verify_service(keyed, make_service()) as verifier:
        assert verifier.config.policy == app.UNCALIBRATED_VERIFY_POLICY
        assert not verifier.judge_enabled


def test_a_claim_the_model_gives_a_zero_vector_gets_an_answer_with_numbers(
    make_service: Callable[..., MemoryService], principal: Principal
) -> None:
    """pgvector answers a zero query vector's cosine similarity with NaN: the answer must
    still be numbers (MCP clients refuse a null similarity), as for a word-only match."""
    service = make_service(BagOfWordsEmbedder())
    service.save(principal, "The user writes { and } on their own lines in C.", "preference")
    found = VerifyService(service, None, VerifyConfig(policy=RULES_ONLY)).verify(principal, "{")
    assert found["verdict"] in {"new", "related"}
    for match in found["matches"]:
        assert math.isfinite(match["similarity"])
    assert json.loads(json.dumps(found, allow_nan=False)) == found


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("User prefers pnpm over npm", "user prefers npm"),
        ("The project uses pnpm instead of npm for installs", "The project uses npm for installs"),
        ("The staging DB moved to port 5433", "The staging DB listens on 5432"),
        ("Never push directly to main", "Always push directly to main"),
    ],
    ids=["over", "instead-of", "moved-port", "never-always"],
)
def test_a_claim_of_the_value_a_memory_rejects_or_replaced_is_a_conflict(
    verifier: VerifyService, semantic: MemoryService, principal: Principal, memory: str, claim: str
) -> None:
    semantic.save(principal, memory, "preference")
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "conflict", result["why"]
    # the chosen value itself is confirmed, not a conflict
    if memory == "User prefers pnpm over npm":
        assert verifier.verify(principal, "The user likes pnpm more than npm")["verdict"] == (
            "confirmed"
        )


@pytest.mark.parametrize(
    ("memory", "claim", "why"),
    [
        (
            "New feature flags default to off in production and on in staging.",
            "New feature flags default to on in production and off in staging.",
            "off",
        ),
        (
            "The team chose Celery over RQ for background jobs.",
            "The team chose RQ over Celery for background jobs.",
            "the same values in swapped places: Celery / RQ",
        ),
        (
            "The user uses VS Code and Leo uses Neovim.",
            "The user uses Neovim and Leo uses VS Code.",
            "the same values in swapped places: VS Code / Neovim",
        ),
        (
            "Direct pushes to the main branch are forbidden.",
            "Direct pushes to the main branch are allowed.",
            "the other value of one setting",
        ),
        (
            "The payments tests run sequentially.",
            "The payments tests run in parallel.",
            "the other value of one setting",
        ),
        # one clause of a memory holding both values of a setting (verify_features)
        (
            "Caching is enabled for the web app but disabled for the admin app.",
            "Caching is disabled for the web app.",
            "the other value of one setting: enabled / disabled",
        ),
        (
            "Run the database migrations before restarting the API workers.",
            "Restart the API workers first, then run the database migrations.",
            "the same things in the other order",
        ),
        # the parts of a written pattern in another order (dedup.swapped)
        (
            "Release tags are written as rel-<year>.<month>-<build>.",
            "Release tags are written as rel-<build>.<month>-<year>.",
            "the same values in swapped places: year / build",
        ),
    ],
)
def test_swapped_values_and_antonyms_are_conflicts(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    memory: str,
    claim: str,
    why: str,
) -> None:
    semantic.save(principal, memory, "fact")
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "conflict", result["why"]
    assert why in result["why"]
    assert verifier.verify(principal, memory)["verdict"] == "confirmed"


def test_one_part_of_a_longer_memory_restated_with_another_number_is_a_conflict(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    semantic.save(
        principal,
        "The shop's admin dashboard is a Django 4.2 app served by gunicorn with 4 workers "
        "behind nginx, deployed from the main branch.",
        "fact",
    )
    result = verifier.verify(principal, "The admin dashboard runs Django 5.0.")
    assert result["verdict"] == "conflict", result["why"]
    assert "one part of the memory gives another value: django 4.2 / 5.0" in result["why"]
    # a claim about something the memory does not name is not contradicted by it
    other = verifier.verify(principal, "The analytics service runs Django 5.0.")
    assert other["verdict"] != "conflict", other["why"]
    # the same number beside the same word confirms, or at least does not conflict
    same = verifier.verify(principal, "The admin dashboard runs Django 4.2.")
    assert same["verdict"] != "conflict", same["why"]
    # a count beside a version both have: the count's word as written ("nodes", not a stem)
    semantic.save(
        principal,
        "The telemetry broker is EMQX 5.3 running on three nodes in the Frankfurt region.",
        "fact",
    )
    nodes = verifier.verify(principal, "The telemetry broker is EMQX 5.3 on five nodes.")
    assert nodes["verdict"] == "conflict", nodes["why"]
    assert "nodes three / five" in nodes["why"]


@pytest.mark.parametrize(
    ("memory", "conflicting", "agreeing", "elsewhere"),
    [
        (
            "Nightly backups go to an S3 bucket in eu-west-1 and are kept for 35 days. "
            "Restores are tested every quarter by the platform team.",
            [
                "Restores are tested every month by the platform team.",
                "Restores are never tested.",
                "Nightly backups go to a bucket in us-east-1.",
            ],
            "Restores are tested every quarter by the platform team.",
            "The platform team tests the dashboards every month.",
        ),
        (
            "The mobile app is built with Flutter and ships every two weeks. Crash reports "
            "go to Sentry, and feature flags live in LaunchDarkly.",
            ["Crash reports go to Bugsnag.", "Feature flags live in Unleash."],
            "Crash reports go to Sentry.",
            "Server errors go to Rollbar.",
        ),
    ],
)
def test_a_claim_one_clause_of_a_longer_memory_contradicts_is_a_conflict(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    memory: str,
    conflicting: list[str],
    agreeing: str,
    elsewhere: str,
) -> None:
    # the whole memory is far from a claim about one of its clauses (0.31 to 0.62 here);
    # the clause closest to the claim, judged alone, contradicts it
    semantic.save(principal, memory, "fact")
    for claim in conflicting:
        result = verifier.verify(principal, claim)
        assert result["verdict"] == "conflict", (claim, result["why"])
        assert 'in its clause "' in result["why"]
        assert "clause similarity" in result["why"]
        assert result["matches"][0]["relation"] == "conflicts"
    # the clause that states the claim confirms it; a claim about something else is no
    # conflict
    assert verifier.verify(principal, agreeing)["verdict"] == "confirmed"
    assert verifier.verify(principal, elsewhere)["verdict"] in ("related", "new")


@pytest.mark.parametrize(
    ("memory", "swapped", "stated"),
    [
        (
            "The router forwards requests to the auth service, which issues a session token "
            "valid for 8 hours.",
            "The auth service forwards requests to the router.",
            "The router forwards requests to the auth service.",
        ),
        (
            "The scheduler wakes the indexer every 5 minutes and the indexer then notifies "
            "the search API.",
            "The indexer wakes the scheduler every 5 minutes.",
            "The scheduler wakes the indexer every 5 minutes.",
        ),
    ],
)
def test_a_claim_with_the_items_of_one_clause_swapped_is_a_conflict_not_a_confirmation(
    verifier: VerifyService,
    semantic: MemoryService,
    principal: Principal,
    memory: str,
    swapped: str,
    stated: str,
) -> None:
    # the whole memory keeps every word of the claim (or is close to it): only its clause
    # says the two items stand the other way round
    semantic.save(principal, memory, "fact")
    whole = rules_answer(RULES_ONLY, swapped, [(memory, 0.9)])
    assert whole.verdict != "conflict", whole.why
    result = verifier.verify(principal, swapped)
    assert result["verdict"] == "conflict", result["why"]
    assert "the same values in swapped places" in result["why"]
    assert 'in its clause "' in result["why"]
    assert verifier.verify(principal, stated)["verdict"] == "confirmed"


class _ClausesDown:
    """The real model for the claim (recall), down when the clauses are embedded."""

    def __init__(self, model: Any) -> None:
        self._model = model

    @property
    def model_name(self) -> str:
        return str(self._model.model_name)

    @property
    def dimensions(self) -> int:
        return int(self._model.dimensions)

    def embed_query(self, text: str) -> list[float]:
        return list(self._model.embed_query(text))

    def embed_documents(self, texts: Any) -> list[list[float]]:
        raise EmbeddingUnavailable("embedding request failed (down for the test)")


class _CountingQueries(_ClausesDown):
    """The real model, counting the queries it embeds."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.queries: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)

    def embed_documents(self, texts: Any) -> list[list[float]]:
        return [list(vector) for vector in self._model.embed_documents(texts)]


def test_the_claim_is_embedded_once_for_recall_and_the_clauses(
    make_service: Callable[..., MemoryService], local_embedder: Any, principal: Principal
) -> None:
    counting = _CountingQueries(local_embedder)
    service = make_service(counting, **MemoryConfig.dedup_fields(DEDUP_POLICIES[LOCAL_MODEL_NAME]))
    service.save(
        principal,
        "The mobile app is built with Flutter and ships every two weeks. Crash reports go to "
        "Sentry, and feature flags live in LaunchDarkly.",
        "fact",
    )
    claim = "Feature flags live in Unleash."
    counting.queries.clear()
    result = VerifyService(service, None, VerifyConfig(policy=POLICY)).verify(principal, claim)
    # the clauses were read (the conflict is in one of them), with the claim's one embedding
    assert 'in its clause "' in result["why"]
    assert counting.queries == [claim]


def test_when_the_clauses_cannot_be_embedded_whole_memories_are_compared(
    semantic: MemoryService,
    make_service: Callable[..., MemoryService],
    local_embedder: Any,
    principal: Principal,
    caplog: pytest.LogCaptureFixture,
) -> None:
    semantic.save(
        principal,
        "Nightly backups go to an S3 bucket in eu-west-1 and are kept for 35 days. Restores "
        "are tested every quarter by the platform team.",
        "fact",
    )
    claim = "Restores are tested every month by the platform team."
    assert (
        VerifyService(semantic, None, VerifyConfig(policy=POLICY)).verify(principal, claim)[
            "verdict"
        ]
        == "conflict"
    )
    half_down = make_service(
        _ClausesDown(local_embedder), **MemoryConfig.dedup_fields(DEDUP_POLICIES[LOCAL_MODEL_NAME])
    )
    with caplog.at_level("WARNING"):
        result = VerifyService(half_down, None, VerifyConfig(policy=POLICY)).verify(
            principal, claim
        )
    # the answer of the whole memory, not an error, and said in the log
    assert result["verdict"] == "related"
    assert result["degraded"] is False
    assert "verify compares whole memories only" in caplog.text


def test_numbers_exchanged_between_a_count_and_a_duration_conflict() -> None:
    memory = "The billing job retries a failed charge up to 3 times, 24 hours apart."
    claim = "The billing job retries a failed charge up to 24 times, 3 hours apart."
    relation, why = RULES_ONLY.relation(0.95, memory, claim)
    assert relation == "conflicts", why
    assert "1 day / 3 hours" in why  # durations as a person says them, not in seconds
    # the same count and duration in other words confirm
    same = "The billing job retries a failed charge up to three times, 24 hours apart."
    assert RULES_ONLY.relation(0.95, memory, same)[0] == "confirms"


def test_a_word_many_memories_share_is_no_evidence_of_a_claims_subject() -> None:
    memories = [
        ("Lena prefers tabs over spaces in Go code.", 0.41),
        ("Lena lives in Vienna and works from home on Fridays.", 0.39),
        ("Lena's laptop is a ThinkPad running Fedora.", 0.36),
        ("Nightly exports go to the archive bucket.", 0.31),
    ]
    # far from every memory (below the related threshold), and its only word in common with
    # them is one most of them have: the store's common vocabulary
    unknown = rules_answer(RULES_ONLY, "Lena grows tomatoes on her balcony.", memories)
    assert unknown.verdict == "new", unknown.why
    # a word only one memory has still makes that memory related
    archive = rules_answer(RULES_ONLY, "The archive bucket is in Frankfurt.", memories)
    assert archive.verdict == "related", archive.why
    # named as the claim writes them, not by their stems ("archiv", "bucket")
    assert "shares the subject's words (archive, bucket)" in archive.why
    # alone, the common word is one memory's: related, as before
    alone = rules_answer(RULES_ONLY, "Lena grows tomatoes on her balcony.", memories[:1])
    assert alone.verdict == "related", alone.why


def test_a_clause_does_not_confirm_its_words_in_another_order() -> None:
    memory = (
        "Nightly backups go to an S3 bucket in eu-west-1 and are kept for 35 days. Restores "
        "are tested every quarter by the platform team."
    )
    claim = "The platform team tests restores every quarter."
    clause = "Restores are tested every quarter by the platform team."
    # a clause that would confirm, judged alone, leaves the memory's own answer
    assert RULES_ONLY.relation(0.9, clause, claim)[0] == "confirms"
    alone = rules_answer(RULES_ONLY, claim, [(memory, 0.4)])
    with_clause = rules_answer(
        RULES_ONLY, claim, [(memory, 0.4)], clauses=[Clause(0.9, read_pair(clause, claim), clause)]
    )
    assert with_clause.verdict == alone.verdict != "confirmed"
    # and with no vectors (the embedder down) the clauses are not read
    words = rules_answer(
        RULES_ONLY,
        "Restores are tested every month.",
        [(memory, None)],
        clauses=[Clause(0.95, read_pair(clause, "Restores are tested every month."), clause)],
    )
    assert "clause" not in words.why


@pytest.mark.parametrize(
    ("claim", "confirms"),
    [
        # the clause's words in its order, a linking verb of the claim's own
        ("Staging database runs Postgres 16.", True),
        # a word of its own, the same words in another order
        ("The staging database needs Postgres 16.", False),
        ("Postgres 16 is what the staging database is.", False),
    ],
)
def test_a_clause_confirms_a_claim_that_says_nothing_of_its_own(claim: str, confirms: bool) -> None:
    memory = (
        "The Wren API runs on Go 1.22 in a distroless image; the staging database is "
        "PostgreSQL 16, and backups run nightly."
    )
    clause = "the staging database is PostgreSQL 16"
    # judged alone the clause states the same values in each case
    assert RULES_ONLY.relation(0.9, clause, claim)[0] == "confirms"
    alone = rules_answer(RULES_ONLY, claim, [(memory, 0.4)])
    assert alone.verdict != "confirmed"
    answer = rules_answer(
        RULES_ONLY, claim, [(memory, 0.4)], clauses=[Clause(0.9, read_pair(clause, claim), clause)]
    )
    assert (answer.verdict == "confirmed") == confirms
    if confirms:
        assert "in its clause" in answer.why


@pytest.mark.parametrize(
    ("claim", "clause", "verdict"),
    [
        # one clause restated, the memory's negation in another clause
        (
            "Tide tables are cached for six hours.",
            "tide tables are cached for six hours",
            "confirmed",
        ),
        (
            "Berth requests go through the harbour API.",
            "berth requests go through the harbour API",
            "confirmed",
        ),
        # a word of the claim's own: about the same subject, neither said nor denied
        (
            "Tide tables are cached for six hours and logged.",
            "tide tables are cached for six hours",
            "related",
        ),
        # the negated clause itself said yes: a conflict
        (
            "Ferry times may be edited in the database.",
            "never edit ferry times in the database",
            "conflict",
        ),
    ],
)
def test_a_negation_in_a_clause_the_claim_does_not_restate_is_no_conflict(
    claim: str, clause: str, verdict: str
) -> None:
    memory = (
        "Never edit ferry times in the database; tide tables are cached for six hours, and "
        "berth requests go through the harbour API."
    )
    # the whole memory's negation counts only in the clause that holds the claim's words
    # (verify_features.negates_the_other), its closest clause read alone agrees
    whole = rules_answer(RULES_ONLY, claim, [(memory, 0.7)])
    assert whole.verdict == verdict, whole.why
    assert ("negates what the other states" in whole.why) is (verdict == "conflict")
    answer = rules_answer(
        RULES_ONLY, claim, [(memory, 0.7)], clauses=[Clause(0.9, read_pair(clause, claim), clause)]
    )
    assert answer.verdict == verdict, answer.why


def test_a_claim_only_the_outranked_side_of_a_conflict_states_is_a_conflict(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    old = semantic.save(principal, "The staging database listens on port 5432", "fact")
    new = semantic.save(principal, "The staging database listens on port 5433", "fact")
    assert new["possible_duplicates"][0]["conflict"] is True
    stale = verifier.verify(principal, "The staging database listens on port 5432")
    assert stale["verdict"] == "conflict", stale["why"]
    assert new["memory"]["id"] in stale["why"]
    assert stale["matches"][0]["id"] == old["memory"]["id"]
    current = verifier.verify(principal, "The staging database listens on port 5433")
    assert current["verdict"] == "confirmed", current["why"]


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        (
            "The nightly export includes archived projects.",
            "The nightly export doesnt include archived projects.",
        ),
        (
            "The test suites share the fixtures.",
            "The test suites share none of the fixtures.",
        ),
        (
            "The partner API accepts requests without a certificate.",
            "The partner API doesn't accept requests without a certificate.",
        ),
    ],
    ids=["no-apostrophe", "none", "two-in-one-clause"],
)
def test_a_negation_of_what_the_memory_states_is_a_conflict(
    verifier: VerifyService, semantic: MemoryService, principal: Principal, memory: str, claim: str
) -> None:
    semantic.save(principal, memory, "fact")
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "conflict", result["why"]
    assert "negates what the other states" in result["why"]


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Never merge on Fridays.", "Don't merge on Fridays."),
        ("The cache is not only fast but also cheap.", "The cache is fast and cheap."),
    ],
    ids=["same-polarity", "not-only"],
)
def test_what_keeps_the_polarity_is_confirmed_not_a_conflict(
    verifier: VerifyService, semantic: MemoryService, principal: Principal, memory: str, claim: str
) -> None:
    semantic.save(principal, memory, "fact")
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "confirmed", result["why"]


def test_a_close_claim_whose_words_do_not_restate_the_memory_is_related_not_confirmed(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    # the same polarity said with two negations turned around is no conflict, but the rules
    # read no rewording in its words: the agent is told to read the match
    semantic.save(principal, "Never run migrations without a backup.", "fact")
    result = verifier.verify(principal, "Always run migrations with a backup.")
    assert result["verdict"] == "related", result["why"]
    assert "its words do not show the same fact" in result["why"]
    # the learned reading leaves it related too (its probability is under the threshold)


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # the other order in words the rules hold no opposite for
        (
            "Coverage plots sort samples by mean depth, highest first.",
            "In the coverage plots, the lowest-depth samples come first.",
        ),
        # a comparison of the two values the memory states, the wrong way round
        (
            "The staging cluster runs Kubernetes 1.30 and production runs 1.29.",
            "Staging runs an older Kubernetes than production.",
        ),
    ],
)
def test_a_close_claim_that_says_the_other_thing_in_other_words_is_not_confirmed(
    memory: str, claim: str
) -> None:
    # as close as a rewording, the same values, no difference the rules read: before a
    # confirmation asked for words that restate, these were answered "states the same values"
    assert not verify_features.restated(memory, claim)
    assert RULES_ONLY.relation(0.85, memory, claim) == (
        "related",
        "close, but its words do not show the same fact: read it",
    )


def test_a_claim_one_sentence_of_a_longer_memory_states_word_for_word_is_confirmed(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    semantic.save(
        principal,
        "The tile renderer is written in Rust and is faster than the old Python renderer by "
        "about a factor of eight; tiles are cached in Redis for 10 minutes.",
        "fact",
    )
    result = verifier.verify(principal, "The tile renderer is written in Rust.")
    assert result["verdict"] == "confirmed", result["why"]
    assert "one clause of the memory states it word for word" in result["why"]
    # the words in another order, the other polarity or an opposite are no confirmation
    for claim in [
        "Rust is written in the tile renderer.",
        "The tile renderer is not written in Rust.",
        "The tile renderer is slower than the old Python renderer.",
    ]:
        answer = verifier.verify(principal, claim)
        assert answer["verdict"] != "confirmed", (claim, answer["why"])


@pytest.mark.parametrize(
    ("memory", "claim", "stated"),
    [
        (
            "CI runs on GitHub Actions; the full test suite takes about 14 minutes.",
            "CI is on GitHub Actions.",
            True,
        ),
        (
            "Deploys run from the release branch via GitLab CI; nobody deploys from a laptop.",
            "Nobody deploys from their laptop.",
            True,
        ),
        # the words, but spread over two sentences
        (
            "Jonas Weber is the product owner; Aiko Tanaka is the hardware lead.",
            "Jonas is the hardware lead.",
            False,
        ),
        # the same words in another order
        (
            "The web app calls the backend REST API, and the backend never calls the web app.",
            "The backend calls the web app.",
            False,
        ),
        # an opposite in place of one word
        (
            "The ingestion cluster scales up to 15 nodes during model-run peaks.",
            "The ingestion cluster scales down during model-run peaks.",
            False,
        ),
        # the claim negates what the memory states
        ("The frontend uses HTMX, not React.", "The frontend doesn't use HTMX.", False),
        # another language
        ("Der Nutzer bevorzugt kurze Funktionsnamen.", "Der Nutzer bevorzugt kurze Namen.", False),
        # the words spread over two clauses joined by "and", a comma or a list
        (
            "Jonas Weber is the product owner and Aiko Tanaka is the hardware lead.",
            "Jonas is the hardware lead.",
            False,
        ),
        (
            "Alice owns billing, Bob owns search, and Carol owns mobile.",
            "Alice owns search.",
            False,
        ),
        ("Service owners:\n- Alice owns billing\n- Bob owns search", "Alice owns search.", False),
        # a condition, a hedge, what someone thinks, a past state, a change, a preference
        ("If the cache is full, requests are rejected.", "Requests are rejected.", False),
        ("The user might be allergic to peanuts.", "The user is allergic to peanuts.", False),
        ("Alice thinks Bob is the tech lead.", "Bob is the tech lead.", False),
        (
            "New hires used to get admin access to production on day one.",
            "New hires get admin access to production.",
            False,
        ),
        ("The old staging cluster ran on GKE.", "The staging cluster runs on GKE.", False),
        ("The release moved from Friday to Monday.", "The release is on Friday.", False),
        ("The user prefers coffee to tea.", "The user prefers tea.", False),
        # a word said twice in the clause is matched twice, in order
        (
            "The frontend is built with the build script and tested with vitest.",
            "The frontend is built with the build script.",
            True,
        ),
        # a hedge the claim says too holds nothing back; one in another sentence holds back
        # only that sentence
        (
            "Maya wants release notes as a weekly email digest.",
            "Maya wants release notes as an email digest.",
            True,
        ),
        (
            "Maya wants release notes as a weekly email digest.",
            "Release notes go out as an email digest.",
            False,
        ),
        (
            "Backups run nightly to the S3 bucket; a move to Backblaze might come later.",
            "Backups run nightly to the S3 bucket.",
            True,
        ),
        (
            "Backups run nightly to the S3 bucket; a move to Backblaze might come later.",
            "A move to Backblaze will come later.",
            False,
        ),
        # a verb joined by "and" takes the sentence's subject; an item that opens with a
        # number, the words before the item it follows; never another subject
        (
            "The billing worker ledgerd is written in Rust and retries on port 7311.",
            "ledgerd retries on port 7311.",
            True,
        ),
        (
            "The billing worker ledgerd is written in Rust and retries on port 7311.",
            "ledgerd is written on port 7311.",
            False,
        ),
        ("The build box has 4 cores and 32 GB of RAM.", "The build box has 32 GB of RAM.", True),
        ("The build box has 4 cores and 32 GB of RAM.", "The build box has 32 cores.", False),
        (
            "Ines owns billing and Marek owns the search service.",
            "Ines owns the search service.",
            False,
        ),
        (
            "Logs go to Loki and backups are kept for 35 days.",
            "Logs are kept for 35 days.",
            False,
        ),
    ],
    ids=[
        "part",
        "negated-both",
        "two-sentences",
        "order",
        "opposite",
        "negation",
        "german",
        "and",
        "commas",
        "list",
        "condition",
        "hedge",
        "thinks",
        "used-to",
        "past",
        "change",
        "preference",
        "word-twice",
        "same-hedge",
        "hedge-not-claimed",
        "hedge-other-sentence",
        "hedge-own-sentence",
        "verb-takes-subject",
        "verb-takes-subject-not-the-other-part",
        "item-takes-words-before",
        "item-takes-words-before-not-another-item",
        "another-subject",
        "noun-with-its-own-verb",
    ],
)
def test_what_one_sentence_states_word_for_word(memory: str, claim: str, stated: bool) -> None:
    assert verify_features.stated_word_for_word(memory, claim) is stated


def test_a_restatement_the_rules_find_only_related_is_confirmed_by_the_learned_reading(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    ids = seed(semantic, principal)
    memory = "Lena answers support tickets at the end of each day, after the last deploy."
    lena = semantic.save(principal, memory, "fact")["memory"]["id"]
    claim = (
        "Lena tends to handle support tickets at the close of her day, once the final deploy "
        "is out."
    )
    result = verifier.verify(principal, claim)
    assert result["verdict"] == "confirmed", result["why"]
    assert "learned reading" in result["why"]
    [best, *others] = result["matches"]
    assert (best["id"], best["relation"]) == (lena, "confirms")
    assert all(m["relation"] == "related" for m in others)
    assert lena not in ids.values()
    # the rules alone read it only as related
    rules = VerifyService(
        semantic, None, VerifyConfig(policy=replace(POLICY, learned_confirmation=""))
    )
    assert rules.verify(principal, claim)["verdict"] == "related"
    # the learned reading confirms no conflict the rules read: another day
    moved = verifier.verify(principal, "Lena answers support tickets at the start of each day.")
    assert moved["verdict"] != "confirmed", moved["why"]


def test_a_close_similarity_confirms_nothing_in_a_language_the_model_does_not_read(
    verifier: VerifyService, semantic: MemoryService, principal: Principal
) -> None:
    semantic.save(
        principal,
        "Il modulo di fatturazione applica l'IVA al 25% sui servizi veterinari e al 15% sul "
        "cibo per animali.",
        "fact",
    )
    swapped = verifier.verify(
        principal,
        "Il modulo di fatturazione applica l'IVA al 15% sui servizi veterinari e al 25% sul "
        "cibo per animali.",
    )
    assert swapped["verdict"] != "confirmed", swapped["why"]
    assert "in a language the model does not read" in swapped["why"]
    # in English the same closeness still confirms
    semantic.save(principal, "The billing module rounds VAT to the nearest cent.", "fact")
    same = verifier.verify(principal, "Billing rounds VAT to the nearest cent.")
    assert same["verdict"] == "confirmed", same["why"]


def test_what_verify_reads_does_not_depend_on_the_process_s_hash_seed() -> None:
    """The words of a clause that are no value (what aligns a claim's clause with a memory's)
    were read from the values joined in a set's order, which changes with PYTHONHASHSEED: a
    date's month was a word in one process and not in another, and one claim was answered
    confirmed or conflict by chance. Every seed must read the same."""
    script = (
        "from emergent_memory.memory import verify_features as vf\n"
        "from emergent_memory.memory.verify_rules import read_pair\n"
        "for t in ('shipped on 4 June 2024', 'Build 7.4.0 was cut on 3 March 2025',\n"
        "          'The nightly job at 02:30 on 5 May 2024 moved to s3://bkt/a-b'):\n"
        "    print(sorted(vf._slot_words(t)))\n"
        "print(read_pair('The current build is 7.4.1, cut on 3 March 2025; the one before, "
        "7.4.0, cut on 17 February 2025.', 'Build 7.4.0 was cut on 3 March 2025 and 7.4.1 on "
        "17 February 2025.'))\n"
    )
    outputs = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1, outputs
    assert "ship" in next(iter(outputs))  # it read the words
