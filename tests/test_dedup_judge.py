"""The save's optional LLM judge (memory/dedup_judge.py), through the real `anthropic` SDK
against a local Messages API: it is asked only about pairs the rules keep both of and report,
its verdict moves such a pair (same or corrects: supersede; conflicts: link; distinct: no
longer reported) but never past a stronger source, each verdict is cached per pair, and any
failure or a spent budget leaves the rules' answer.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import psycopg
import pytest
from fastmcp import Client
from psycopg_pool import ConnectionPool

from emergent_memory import telemetry
from emergent_memory.app import dedup_judge
from emergent_memory.auth.principal import Principal
from emergent_memory.llm import AnthropicClient
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.dedup_judge import (
    JUDGE_PURPOSE,
    JUDGE_TOOL,
    DedupJudge,
    DedupJudgeConfig,
    pair_key,
)
from emergent_memory.memory.duplicates import DuplicateService
from emergent_memory.settings import load_settings
from tests.embedders import BagOfWordsEmbedder
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, error, tool_use
from tests.helpers import make_token
from tests.test_mcp import server_for
from tests.test_rest_api import Api, api_client, api_services

# With the bag-of-words embedder and threshold 0.8, the rules keep both of each pair and report
# it: another port without a change word (a conflict), and a longer text that keeps the old one
# whole and adds to it (another statement).
PORT_OLD = "The {name} staging database listens on port 5432"
PORT_NEW = "The {name} staging database listens on port 5433"
ADDS_OLD = "The {name} team reviews pull requests on Monday mornings"
ADDS_NEW = "The {name} team reviews pull requests on Monday mornings with two approvers"


@pytest.fixture
def name() -> str:
    return "".join(random.choices(string.ascii_lowercase, k=10))


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key="test-key") as server:
        yield server


def make_judge(fake: FakeAnthropic, **config: Any) -> DedupJudge:
    settings = {"api_key": "test-key", "base_url": fake.url, "model": "claude-judge"} | config
    return DedupJudge(DedupJudgeConfig(**settings))


@pytest.fixture
def judged(pool: ConnectionPool, fake: FakeAnthropic) -> Iterator[MemoryService]:
    judge = make_judge(fake, max_retries=0)
    yield MemoryService(pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8), judge=judge)
    judge.close()


def answer_with(verdict: str, why: str = "the judge's reason") -> Callable[..., Reply]:
    def answer(request: RecordedRequest) -> Reply:
        assert request.forced_tool == JUDGE_TOOL.name
        return tool_use(
            JUDGE_TOOL.name, {"verdict": verdict, "why": why}, input_tokens=90, output_tokens=12
        )

    return answer


def llm_calls(
    connect: Callable[[], psycopg.Connection[Any]], principal: Principal
) -> list[tuple[Any, ...]]:
    with connect() as conn:
        return conn.execute(
            "SELECT purpose, model, input_tokens, output_tokens, outcome, error "
            "FROM kb.llm_calls WHERE actor_id = %s ORDER BY created_at",
            (principal.actor_id,),
        ).fetchall()


def queued(connect: Callable[[], psycopg.Connection[Any]], principal: Principal) -> int:
    with connect() as conn:
        row = conn.execute(
            "SELECT count(*) FROM kb.possible_duplicates WHERE actor_id = %s",
            (principal.actor_id,),
        ).fetchone()
        assert row is not None
        return int(row[0])


def statuses(service: MemoryService, principal: Principal) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for status in ("active", "superseded"):
        listed = service.list_memories(principal, status=status, limit=100)["memories"]
        found |= {m["id"]: dict(m) | {"status": status} for m in listed}
    return found


def test_without_a_judge_the_rules_keep_both_pairs_and_report_them(
    service: MemoryService, principal: Principal, name: str
) -> None:
    for old, new in ((PORT_OLD, PORT_NEW), (ADDS_OLD, ADDS_NEW)):
        service.save(principal, old.format(name=name), "fact")
        saved = service.save(principal, new.format(name=name), "fact")
        assert saved["superseded_ids"] == []
        assert len(saved["possible_duplicates"]) == 1


def test_same_supersedes_records_why_and_caches_the_verdict(
    judged: MemoryService,
    principal: Principal,
    name: str,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    fake.handler = answer_with("same")
    answered = judge_calls("ok")
    old = judged.save(principal, ADDS_OLD.format(name=name), "convention", importance="high")
    new = judged.save(principal, ADDS_NEW.format(name=name), "convention")
    assert new["status"] == "updated"
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert new["memory"]["importance"] == "high"  # nothing of the old memory is lost
    [request] = fake.message_requests
    assert request.model == "claude-judge"
    assert ADDS_OLD.format(name=name) in request.text
    assert ADDS_NEW.format(name=name) in request.text
    replaced = statuses(judged, principal)[old["memory"]["id"]]
    assert replaced["status"] == "superseded"
    assert replaced["superseded_because"].startswith(
        "the LLM judge: the same fact reworded (similarity 0."
    )
    assert llm_calls(connect, principal) == [(JUDGE_PURPOSE, "claude-judge", 90, 12, "ok", None)]
    assert judge_calls("ok") == answered + 1
    key = pair_key("claude-judge", ADDS_OLD.format(name=name), ADDS_NEW.format(name=name))
    with connect() as conn:
        rows = conn.execute(
            "SELECT pair_key, model, verdict FROM kb.pair_judgments WHERE actor_id = %s",
            (principal.actor_id,),
        ).fetchall()
    assert rows == [(key, "claude-judge", "same")]  # a hash and the verdict, never the text


def test_a_cached_verdict_is_not_asked_again(
    judged: MemoryService, principal: Principal, name: str, fake: FakeAnthropic
) -> None:
    fake.handler = answer_with("conflicts")
    judged.save(principal, PORT_OLD.format(name=name), "fact")
    first = judged.save(principal, PORT_NEW.format(name=name), "fact")
    assert len(fake.message_requests) == 1
    judged.delete(principal, first["memory"]["id"])
    again = judged.save(principal, PORT_NEW.format(name=name), "fact")
    assert len(fake.message_requests) == 1  # the same pair: the cached verdict
    assert again["possible_duplicates"][0]["conflict"] is True


def test_conflicts_links_a_pair_the_rules_only_reported(
    judged: MemoryService, principal: Principal, name: str, fake: FakeAnthropic
) -> None:
    fake.handler = answer_with("conflicts")
    old = judged.save(principal, ADDS_OLD.format(name=name), "convention")
    new = judged.save(principal, ADDS_NEW.format(name=name), "convention")
    [close] = new["possible_duplicates"]
    assert (close["id"], close.get("conflict")) == (old["memory"]["id"], True)
    assert new["memory"]["conflicts_with"] == [old["memory"]["id"]]
    assert new["memory"]["conflict"] == "current"
    # the review queue says who decided it
    [pair] = DuplicateService(judged.pool, judged).open(principal)["pairs"]
    assert pair["conflict"] is True
    assert pair["why"].startswith("the LLM judge: another value of the same subject")


def test_corrects_supersedes_another_value(
    judged: MemoryService, principal: Principal, name: str, fake: FakeAnthropic
) -> None:
    fake.handler = answer_with("corrects")
    old = judged.save(principal, PORT_OLD.format(name=name), "fact")
    new = judged.save(principal, PORT_NEW.format(name=name), "fact")
    assert new["superseded_ids"] == [old["memory"]["id"]]
    assert new["memory"]["conflicts_with"] == []
    replaced = statuses(judged, principal)[old["memory"]["id"]]
    assert replaced["superseded_because"].startswith("the LLM judge: it corrects the old value")


def test_distinct_keeps_both_and_no_longer_reports_the_pair(
    judged: MemoryService,
    principal: Principal,
    name: str,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    fake.handler = answer_with("distinct")
    old = judged.save(principal, PORT_OLD.format(name=name), "fact")
    new = judged.save(principal, PORT_NEW.format(name=name), "fact")
    assert (new["status"], new["superseded_ids"], new["possible_duplicates"]) == (
        "created",
        [],
        [],
    )
    assert new["memory"]["conflicts_with"] == []
    active = statuses(judged, principal)
    assert active[old["memory"]["id"]]["status"] == "active"  # nothing hidden
    assert queued(connect, principal) == 0


def test_the_judge_never_lets_a_weaker_source_replace_a_stronger_one(
    judged: MemoryService, principal: Principal, name: str, fake: FakeAnthropic
) -> None:
    fake.handler = answer_with("corrects")
    told = judged.save(principal, PORT_OLD.format(name=name), "fact", source="explicit")
    inferred = judged.save(principal, PORT_NEW.format(name=name), "fact", source="inferred")
    assert inferred["superseded_ids"] == []
    [close] = inferred["possible_duplicates"]
    assert close["kept_because"].startswith("kept beside it")
    assert close["conflict"] is True  # a correction from a weaker source: another value
    mine = statuses(judged, principal)
    assert mine[told["memory"]["id"]]["conflict"] == "current"
    assert mine[inferred["memory"]["id"]]["conflict"] == "outranked"


def test_the_judge_is_asked_only_about_undecided_pairs_of_one_holder(
    judged: MemoryService, principal: Principal, name: str, fake: FakeAnthropic
) -> None:
    fake.handler = answer_with("same")
    # an exact repeat, a rewording the rules supersede, an unrelated text
    judged.save(principal, f"The {name} user prefers pnpm over npm in this repository", "fact")
    judged.save(principal, f"The {name} user prefers pnpm over npm in this repository", "fact")
    reworded = judged.save(
        principal, f"In this repository the {name} user prefers pnpm over npm", "fact"
    )
    assert len(reworded["superseded_ids"]) == 1
    judged.save(principal, f"The {name} cat is called Miso", "fact")
    # two chat speakers, and the same said of someone else too: never the same fact
    judged.save(principal, f"Caroline: I love making {name} jewelry out of recycled stuff", "fact")
    speakers = judged.save(
        principal, f"Andrew: I love making {name} jewelry out of recycled stuff", "fact"
    )
    assert speakers["superseded_ids"] == []
    judged.save(principal, f"The {name} backend team deploys on Tuesdays", "fact")
    also = judged.save(principal, f"The {name} backend team also deploys on Tuesdays", "fact")
    assert also["superseded_ids"] == []
    assert fake.message_requests == []
    # and a pair the rules leave undecided is asked about, once
    judged.save(principal, ADDS_OLD.format(name=name), "convention")
    judged.save(principal, ADDS_NEW.format(name=name), "convention")
    assert len(fake.message_requests) == 1


def judge_calls(outcome: str) -> float:
    """The judge's model calls measured with this outcome (/metrics)."""
    sample = telemetry.REGISTRY.get_sample_value(
        "emergent_memory_operations_total",
        {"kind": "llm", "operation": "dedup_judge", "outcome": outcome},
    )
    return sample or 0.0


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (error(500, "api_error", "internal error"), "unavailable"),
        (tool_use(JUDGE_TOOL.name, {"verdict": "maybe", "why": "not a verdict"}), "error"),
    ],
    ids=["server error", "malformed"],
)
def test_a_failed_call_leaves_the_rules_answer(
    judged: MemoryService,
    principal: Principal,
    name: str,
    fake: FakeAnthropic,
    connect: Callable[[], psycopg.Connection[Any]],
    reply: Reply,
    outcome: str,
) -> None:
    fake.enqueue(reply)
    before = judge_calls(outcome)
    old = judged.save(principal, PORT_OLD.format(name=name), "fact")
    new = judged.save(principal, PORT_NEW.format(name=name), "fact")
    assert judge_calls(outcome) == before + 1  # measured as what it was
    [close] = new["possible_duplicates"]  # what the rules say: a conflict, kept and reported
    assert (close["id"], close["conflict"]) == (old["memory"]["id"], True)
    [(purpose, _, _, _, outcome, reason)] = llm_calls(connect, principal)
    assert (purpose, outcome) == (JUDGE_PURPOSE, "error")
    assert "5433" not in reason
    assert name not in reason
    with connect() as conn:
        cached = conn.execute(
            "SELECT count(*) FROM kb.pair_judgments WHERE actor_id = %s", (principal.actor_id,)
        ).fetchone()
    assert cached == (0,)  # a failure is not a verdict: the next save asks again


def test_with_the_budget_spent_the_judge_is_not_asked(
    pool: ConnectionPool, fake: FakeAnthropic, principal: Principal, name: str
) -> None:
    judge = make_judge(fake, daily_token_budget=0)
    service = MemoryService(
        pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8), judge=judge
    )
    fake.handler = answer_with("same")
    service.save(principal, ADDS_OLD.format(name=name), "fact")
    new = service.save(principal, ADDS_NEW.format(name=name), "fact")
    assert new["superseded_ids"] == []
    assert len(new["possible_duplicates"]) == 1
    assert fake.message_requests == []


def test_another_actors_verdicts_are_neither_read_nor_shared(
    judged: MemoryService, fake: FakeAnthropic, name: str
) -> None:
    fake.handler = answer_with("same")
    one, two = (Principal(uuid.uuid4(), uuid.uuid4()) for _ in range(2))
    for principal in (one, two):
        judged.save(principal, ADDS_OLD.format(name=name), "fact")
        judged.save(principal, ADDS_NEW.format(name=name), "fact")
    assert len(fake.message_requests) == 2  # each actor's own cache


def test_the_composition_root_gives_a_judge_only_with_a_key() -> None:
    assert dedup_judge(load_settings({})) is None
    keyed = {"EMERGENT_MEMORY_ANTHROPIC_API_KEY": "test-key"}
    assert dedup_judge(load_settings(keyed | {"EMERGENT_MEMORY_DEDUP_JUDGE": "false"})) is None
    judge = dedup_judge(
        load_settings(
            keyed
            | {
                "EMERGENT_MEMORY_CAPTURE_GATE_MODEL": "claude-gate",
                "EMERGENT_MEMORY_CAPTURE_DAILY_TOKEN_BUDGET": "5000",
                "EMERGENT_MEMORY_LLM_TIMEOUT": "90",
                "EMERGENT_MEMORY_LLM_MAX_RETRIES": "4",
            }
        )
    )
    assert judge is not None
    config = judge.config
    assert (config.model, config.daily_token_budget) == ("claude-gate", 5000)
    assert (config.timeout, config.max_retries) == (20.0, 1)  # a save waits for it


def test_the_client_is_made_on_the_first_question(fake: FakeAnthropic) -> None:
    made: list[AnthropicClient] = []

    def client() -> AnthropicClient:
        made.append(
            AnthropicClient(api_key="test-key", base_url=fake.url, timeout=5, max_retries=0)
        )
        return made[-1]

    judge = DedupJudge(DedupJudgeConfig(api_key="test-key", base_url=fake.url), client)
    assert made == []
    assert judge.client() is judge.client()
    assert len(made) == 1
    judge.close()


def test_through_mcp_and_rest_a_judged_supersession_says_why(
    judged: MemoryService,
    principal: Principal,
    name: str,
    fake: FakeAnthropic,
    database_url: str,
) -> None:
    fake.handler = answer_with("corrects")
    server = server_for(judged, principal)

    async def save_both() -> tuple[Any, Any]:
        async with Client(server) as client:
            saved = []
            for content in (PORT_OLD, PORT_NEW):
                result = await client.call_tool(
                    "save_memory",
                    {"content": content.format(name=name), "category": "fact", "detail": True},
                )
                assert not result.is_error
                saved.append(result.structured_content)
            return saved[0], saved[1]

    old, new = anyio.run(save_both)
    assert new["superseded_ids"] == [old["memory"]["id"]]
    with api_client(judged, api_services(judged)) as client:
        token = make_token(database_url, principal.actor_id, principal.project_id)[0]
        api = Api(client, token)
        shown = api.get(f"/memories/{old['memory']['id']}").json()
    assert shown["status"] == "superseded"
    assert shown["superseded_because"].startswith("the LLM judge: it corrects the old value")
