"""Automatic capture's server side, before any model is asked: what `CaptureService.enqueue`
stores (turns without secrets, injected markers or the middle of long tool output), its
idempotent indices, windows and final flush; capture off; provenance (`derived_from`).

The worker (gate, extractor, proposals) is tested in test_capture_worker.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool
from starlette.testclient import TestClient

from emergent_memory import graph
from emergent_memory.auth.principal import READ, Principal
from emergent_memory.errors import InvalidInput, PermissionDenied
from emergent_memory.llm import AnthropicClient
from emergent_memory.memory import MemoryService, capture_text, secrets, store
from emergent_memory.memory import capture as capture_module
from emergent_memory.memory.capture import (
    CaptureConfig,
    CapturedMessage,
    CaptureReceipt,
    CaptureService,
)
from tests.helpers import make_token
from tests.test_rest_api import api_client, api_services


def episode(pool: ConnectionPool, principal: Principal, session_id: str = "s-1") -> uuid.UUID:
    """An Episode of the principal, as capture writes one."""
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, principal.actor_id, principal.project_id)
        graph.install_pack(conn, principal.project_id, "agent-memory")
        made = graph.create_object(
            conn,
            project_id=principal.project_id,
            type=store.EPISODE,
            actor_id=principal.actor_id,
            scope="project",
            properties={
                "session_id": session_id,
                "client": "api",
                "first_turn": 0,
                "last_turn": 1,
                "digest": "0" * 64,
                "text": "user: I use tabs.",
            },
        )
    return made.canonical_id


def derived_from(pool: ConnectionPool, memory_id: str) -> list[uuid.UUID]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT dst_id FROM kb.graph_relationships WHERE src_id = %s "
            "AND type = 'DERIVED_FROM' AND is_head AND deleted_at IS NULL",
            (memory_id,),
        ).fetchall()
    return [row[0] for row in rows]


# -- provenance -------------------------------------------------------------------------------


def test_a_save_derived_from_an_episode_links_the_memory_to_it(
    service: MemoryService, principal: Principal, pool: ConnectionPool, owner_pool: ConnectionPool
) -> None:
    source = episode(pool, principal)
    saved = service.save(principal, "The user indents with tabs", "preference", derived_from=source)
    assert derived_from(owner_pool, saved["memory"]["id"]) == [source]
    # a repeat reinforces the same memory, and links it to the second episode too
    second = episode(pool, principal, "s-2")
    again = service.save(principal, "The user indents with tabs", "preference", derived_from=second)
    assert again["status"] == "unchanged"
    assert sorted(derived_from(owner_pool, saved["memory"]["id"])) == sorted([source, second])


def test_derived_from_must_name_a_visible_object_and_nothing_is_saved_otherwise(
    service: MemoryService, principal: Principal, pool: ConnectionPool, owner_pool: ConnectionPool
) -> None:
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    hidden = episode(pool, other)  # another actor's: row-level security hides it
    for source in (hidden, uuid.uuid4()):
        with pytest.raises(InvalidInput, match="derived_from: no object with id"):
            service.save(principal, "The user indents with tabs", "preference", derived_from=source)
    listed: Any = service.manage(principal, "list")
    assert listed["count"] == 0


# -- receiving a conversation -----------------------------------------------------------------

KEY = "sk-ant-test-capture-0123456789"
MODELS = {"gate_model": "claude-haiku-4-5", "extractor_model": "claude-sonnet-4-6"}
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape
INJECTED = (
    "<emergent-memory>\nMemories from earlier sessions:\n- The user uses tabs [id]\n"
    "</emergent-memory>"
)


def messages(*pairs: tuple[str, str]) -> list[CapturedMessage]:
    return [CapturedMessage(role, content) for role, content in pairs]  # type: ignore[arg-type]


def said(count: int, start: int = 0) -> list[CapturedMessage]:
    return [CapturedMessage("user", f"message {start + n}") for n in range(count)]


@pytest.fixture
def capture(service: MemoryService) -> Iterator[CaptureService]:
    """Capture on (a key; the models are never asked here), windows of 4 turns."""
    llm = AnthropicClient(api_key=KEY, base_url="http://127.0.0.1:9", timeout=10, max_retries=0)
    config = CaptureConfig(**MODELS, window_turns=4, window_overlap=1)
    yield CaptureService(service, llm, config)
    llm.close()


def turns_of(pool: ConnectionPool, principal: Principal, session_id: str) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT turn_index, role, content FROM kb.capture_turns "
            "WHERE actor_id = %s AND session_id = %s ORDER BY turn_index",
            (principal.actor_id, session_id),
        ).fetchall()


def windows_of(pool: ConnectionPool, principal: Principal) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT session_id, first_turn, end_turn, status, project_id FROM kb.capture_windows "
            "WHERE actor_id = %s ORDER BY session_id, first_turn",
            (principal.actor_id,),
        ).fetchall()


def session_row(pool: ConnectionPool, principal: Principal, session_id: str) -> Any:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT turns_received, turns_windowed, client FROM kb.agent_sessions "
            "WHERE actor_id = %s AND session_id = %s",
            (principal.actor_id, session_id),
        ).fetchone()


def enqueue(
    capture: CaptureService,
    principal: Principal,
    sent: list[CapturedMessage],
    *,
    session_id: str = "s-1",
    first_index: int | None = None,
    final: bool = False,
) -> CaptureReceipt:
    return capture.enqueue(
        principal,
        session_id=session_id,
        client="claude-code",
        messages=sent,
        first_index=first_index,
        final=final,
    )


def test_indices_already_received_are_not_stored_again(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    first = enqueue(capture, principal, said(3))
    assert first == {
        "capture": "queued",
        "accepted": 3,
        "already_received": 0,
        "next_index": 3,
        "windows_queued": 0,
    }
    # the hook sends 1..4 again after a timeout: 1 and 2 are known, 3 and 4 are new
    again = enqueue(capture, principal, said(4, start=1), first_index=1)
    assert (again["accepted"], again["already_received"], again["next_index"]) == (2, 2, 5)
    # the same batch once more: nothing new
    repeat = enqueue(capture, principal, said(4, start=1), first_index=1)
    assert (repeat["accepted"], repeat["already_received"], repeat["next_index"]) == (0, 4, 5)
    stored = turns_of(owner_pool, principal, "s-1")
    assert [(i, c) for i, _, c in stored] == [(n, f"message {n}") for n in range(5)]
    assert session_row(owner_pool, principal, "s-1")[:2] == (5, 4)  # one window of 4 cut


def test_a_gap_is_refused_naming_the_index_to_send_from(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    enqueue(capture, principal, said(2))
    with pytest.raises(InvalidInput, match=r"first_index 5 leaves a gap.*from index 2"):
        enqueue(capture, principal, said(2, start=5), first_index=5)
    assert len(turns_of(owner_pool, principal, "s-1")) == 2
    assert session_row(owner_pool, principal, "s-1")[0] == 2
    # a new session starts at 0
    with pytest.raises(InvalidInput, match="from index 0"):
        enqueue(capture, principal, said(1), session_id="new", first_index=1)


def test_full_windows_are_cut_and_final_flushes_the_rest(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    receipt = enqueue(capture, principal, said(10))
    assert receipt["windows_queued"] == 2
    assert [w[1:4] for w in windows_of(owner_pool, principal)] == [
        (0, 4, "pending"),
        (4, 8, "pending"),
    ]
    assert windows_of(owner_pool, principal)[0][4] == principal.project_id
    flushed = enqueue(capture, principal, [], final=True)
    assert (flushed["accepted"], flushed["windows_queued"], flushed["next_index"]) == (0, 1, 10)
    assert [w[1:3] for w in windows_of(owner_pool, principal)][-1] == (8, 10)
    assert session_row(owner_pool, principal, "s-1")[:2] == (10, 10)
    # nothing left to flush
    assert enqueue(capture, principal, [], final=True)["windows_queued"] == 0
    assert len(windows_of(owner_pool, principal)) == 3


def test_a_full_window_is_queued_once_a_turn_after_it_arrives(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    """Until a session is flushed it always has a turn waiting: a session with none waiting
    is one whose turns no later window reads (they are deleted once its windows are done)."""
    assert enqueue(capture, principal, said(4))["windows_queued"] == 0
    assert session_row(owner_pool, principal, "s-1")[:2] == (4, 0)
    assert enqueue(capture, principal, said(1, start=4))["windows_queued"] == 1
    assert [w[1:3] for w in windows_of(owner_pool, principal)] == [(0, 4)]
    assert session_row(owner_pool, principal, "s-1")[:2] == (5, 4)


def test_secrets_are_never_stored_not_even_in_the_queue(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    sent = messages(
        ("user", f"my GitHub token is {TOKEN}, use it for the release"),
        ("tool", f"export GITHUB_TOKEN={TOKEN}\npostgres://deploy:Sup3rS3cret!x@db.internal/app"),
        ("assistant", "I will use the token from the environment."),
    )
    enqueue(capture, principal, sent, final=True)
    stored = turns_of(owner_pool, principal, "s-1")
    assert len(stored) == 3
    with owner_pool.connection() as conn:
        everywhere = conn.execute(
            "SELECT count(*) FROM kb.capture_turns WHERE content LIKE %s OR content LIKE %s",
            (f"%{TOKEN}%", "%Sup3rS3cret%"),
        ).fetchone()
    assert everywhere == (0,)
    assert stored[0][2] == "my GitHub token is [secret removed], use it for the release"
    assert stored[1][2].count("[secret removed]") == 2
    assert stored[2][2] == "I will use the token from the environment."


def test_injected_memories_are_stripped_and_long_tool_output_keeps_head_and_tail(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    output = "HEAD " + "x" * 5000 + " TAIL"
    sent = messages(
        ("user", f"{INJECTED}\nPlease run the tests"),
        ("tool", output),
        ("user", f"<emergent-memory>cut off by the client: no end marker {TOKEN}"),
        ("user", "y" * 20_000),
    )
    enqueue(capture, principal, sent)
    stored = [content for _, _, content in turns_of(owner_pool, principal, "s-1")]
    assert stored[0] == "Please run the tests"
    assert stored[1].startswith("HEAD ")
    assert stored[1].endswith(" TAIL")
    assert "[... 3510 characters of tool output cut ...]" in stored[1]
    assert len(stored[1]) < 1500 + 60
    assert stored[2] == ""  # an unclosed marker removes the rest of the turn
    assert "characters of text cut" in stored[3]
    assert len(stored[3]) < 8100


def test_a_secret_across_a_cut_is_found_whole(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    """A tool output far longer than the limit (1,500: a head of 1,000 and a tail of 500) is
    cut before it is scanned; a token that starts 20 characters before the head's cut, and
    one that ends 20 characters after the tail's, are still seen whole and removed."""
    filler = "all good\n" * 3000
    before, after = filler[:979] + " ", "\n" + filler[:479]
    output = before + TOKEN + "\n" + filler + TOKEN + after
    assert (output.index(TOKEN), len(output) - output.rindex(TOKEN)) == (980, 520)
    cleaned = capture_text.clean("tool", output, tool_output_chars=1500)
    assert cleaned.secrets_removed == 2
    enqueue(capture, principal, messages(("tool", output)))
    [(_, _, stored)] = turns_of(owner_pool, principal, "s-1")
    assert stored == cleaned.content
    assert not any(TOKEN[i : i + 8] in stored for i in range(len(TOKEN) - 7))
    assert stored.startswith(before + capture_text.REDACTION)
    assert stored.endswith(capture_text.REDACTION + after)


def test_a_turn_is_scanned_again_only_when_cleaning_changed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned: list[str] = []
    find_secrets = secrets.find_secrets

    def scan(text: str) -> Any:
        scanned.append(text)
        return find_secrets(text)

    # capture_text imports the scanner where it scans (start-up: tests/test_startup.py)
    monkeypatch.setattr(secrets, "find_secrets", scan)
    assert capture_text.clean("user", "plain words", tool_output_chars=1500).content == (
        "plain words"
    )
    assert scanned == ["plain words"]
    scanned.clear()
    redacted = capture_text.clean("user", f"token {TOKEN}", tool_output_chars=1500)
    assert (redacted.content, redacted.secrets_removed) == ("token [secret removed]", 1)
    assert scanned == [f"token {TOKEN}", "token [secret removed]"]
    scanned.clear()
    cut = capture_text.clean("tool", "x" * 2000, tool_output_chars=1500)
    assert cut.chars_cut == 500
    assert scanned == ["x" * 2000, cut.content]


def test_turns_are_cleaned_before_the_session_is_locked(
    capture: CaptureService,
    principal: Principal,
    owner_pool: ConnectionPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cleaning a long turn takes time: another request of the session must not wait for it
    (the session's row is locked from the transaction's start to its commit)."""
    enqueue(capture, principal, said(1))
    locked: list[bool] = []

    def clean(*args: Any, **kwargs: Any) -> capture_text.CleanTurn:
        with owner_pool.connection() as conn:
            try:
                conn.execute(
                    "SELECT 1 FROM kb.agent_sessions WHERE actor_id = %s AND session_id = 's-1' "
                    "FOR UPDATE NOWAIT",
                    (principal.actor_id,),
                )
                locked.append(False)
            except psycopg.errors.LockNotAvailable:
                locked.append(True)
        return capture_text.clean(*args, **kwargs)

    monkeypatch.setattr(capture_module, "clean", clean)
    assert enqueue(capture, principal, said(2, start=1))["accepted"] == 2
    assert locked == [False, False]
    assert [c for _, _, c in turns_of(owner_pool, principal, "s-1")] == [
        "message 0",
        "message 1",
        "message 2",
    ]


def test_another_actors_session_with_the_same_id_is_its_own(
    capture: CaptureService, principal: Principal, owner_pool: ConnectionPool, pool: ConnectionPool
) -> None:
    other = Principal(actor_id=uuid.uuid4(), project_id=principal.project_id)
    enqueue(capture, principal, said(5))
    theirs = enqueue(capture, other, messages(("user", "another actor's words")))
    assert (theirs["accepted"], theirs["next_index"]) == (1, 1)  # not 5: a session of its own
    assert [c for _, _, c in turns_of(owner_pool, other, "s-1")] == ["another actor's words"]
    assert len(turns_of(owner_pool, principal, "s-1")) == 5
    # row-level security: acting as the other actor, none of the first actor's rows is visible
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, other.actor_id, other.project_id)
        seen = conn.execute(
            "SELECT (SELECT count(*) FROM kb.capture_turns), "
            "(SELECT count(*) FROM kb.capture_windows), (SELECT count(*) FROM kb.agent_sessions)"
        ).fetchone()
    assert seen == (1, 0, 1)


def test_with_capture_off_nothing_is_stored_but_input_is_still_checked(
    service: MemoryService, principal: Principal, owner_pool: ConnectionPool
) -> None:
    off = CaptureService(service, None, CaptureConfig(**MODELS))
    assert off.enabled is False
    receipt = off.enqueue(
        principal,
        session_id="s-off",
        client="api",
        messages=messages(("user", f"token {TOKEN}"), ("assistant", "ok")),
        first_index=None,
        final=True,
    )
    assert receipt == {  # nothing acknowledged: the client sends from index 0 again
        "capture": "off",
        "accepted": 0,
        "already_received": 0,
        "next_index": 0,
        "windows_queued": 0,
    }
    with owner_pool.connection() as conn:
        rows = conn.execute(
            "SELECT (SELECT count(*) FROM kb.capture_turns WHERE actor_id = %(a)s), "
            "(SELECT count(*) FROM kb.capture_windows WHERE actor_id = %(a)s), "
            "(SELECT count(*) FROM kb.agent_sessions WHERE actor_id = %(a)s)",
            {"a": principal.actor_id},
        ).fetchone()
    assert rows == (0, 0, 0)
    with pytest.raises(InvalidInput, match="role must be one of user, assistant, tool"):
        off.enqueue(
            principal,
            session_id="s-off",
            client="api",
            messages=[CapturedMessage("system", "x")],  # type: ignore[arg-type]
            first_index=None,
            final=False,
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"session_id": ""}, "session_id must be a non-empty string"),
        ({"session_id": "s" * 201}, "session_id is 201 characters long; the limit is 200"),
        ({"session_id": "a\nb"}, "session_id contains a control"),
        ({"client": ""}, "client must be a non-empty string"),
        ({"client": "c" * 101}, "client is 101 characters long; the limit is 100"),
        ({"first_index": -1}, "first_index must be a whole number"),
        ({"first_index": True}, "first_index must be a whole number"),
        ({"final": "yes"}, "final must be true or false; got a string"),
        ({"messages": "hello"}, "messages must be a list"),
        ({"messages": [{"role": "user"}]}, r"messages\[0\].content must be a string"),
        ({"messages": [{"role": "robot", "content": "x"}]}, r"messages\[0\].role must be"),
        ({"messages": [CapturedMessage("user", "x")] * 10_001}, "the limit is 10000 per request"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message_and_nothing_stored(
    capture: CaptureService,
    principal: Principal,
    owner_pool: ConnectionPool,
    change: dict[str, Any],
    message: str,
) -> None:
    arguments: dict[str, Any] = {
        "session_id": "s-1",
        "client": "api",
        "messages": said(1),
        "first_index": None,
        "final": False,
    } | change
    with pytest.raises(InvalidInput, match=message):
        capture.enqueue(principal, **arguments)
    assert windows_of(owner_pool, principal) == []
    assert session_row(owner_pool, principal, "s-1") is None


def test_a_read_only_credential_may_not_capture(
    capture: CaptureService, principal: Principal
) -> None:
    reader = Principal(principal.actor_id, principal.project_id, frozenset({READ}))
    with pytest.raises(PermissionDenied, match="memory:write"):
        enqueue(capture, reader, said(1))


# -- over HTTP ----------------------------------------------------------------------------------


def capture_app(service: MemoryService, capture: CaptureService | None) -> TestClient:
    return api_client(service, api_services(service, capture), max_request_bytes=1_048_576)


def test_the_capture_endpoint_queues_turns_and_refuses_a_gap(
    service: MemoryService,
    capture: CaptureService,
    principal: Principal,
    database_url: str,
    owner_pool: ConnectionPool,
) -> None:
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    headers = {"Authorization": f"Bearer {token}"}
    body = {
        "session_id": "http-1",
        "client": "opencode",
        "messages": [
            {"role": "user", "content": f"I prefer pnpm. My token is {TOKEN}"},
            {"role": "assistant", "content": "pnpm it is."},
        ],
    }
    with capture_app(service, capture) as client:
        context = client.post(
            "/api/v1/context",
            json={"session_id": "http-start", "event": "session_start"},
            headers=headers,
        )
        assert context.json()["capture"] == "on"
        queued = client.post("/api/v1/capture", json=body, headers=headers)
        assert queued.status_code == 202
        assert queued.json() == {
            "capture": "queued",
            "accepted": 2,
            "already_received": 0,
            "next_index": 2,
            "windows_queued": 0,
        }
        gap = client.post(
            "/api/v1/capture", json=body | {"first_index": 9, "final": True}, headers=headers
        )
        assert gap.status_code == 400
        assert "send the session's messages from index 2" in gap.json()["error"]["message"]
        flushed = client.post(
            "/api/v1/capture",
            json=body | {"first_index": 0, "final": True},
            headers=headers,
        )
        assert flushed.json()["already_received"] == 2
        assert flushed.json()["windows_queued"] == 1
    stored = [content for _, _, content in turns_of(owner_pool, principal, "http-1")]
    assert stored == ["I prefer pnpm. My token is [secret removed]", "pnpm it is."]
    assert session_row(owner_pool, principal, "http-1")[2] == "opencode"


def test_the_capture_endpoint_says_when_capture_is_off(
    service: MemoryService, principal: Principal, database_url: str, owner_pool: ConnectionPool
) -> None:
    """202 with "capture": "off" and nothing acknowledged (next_index is where the request
    started, so a client sends it again once capture is on); the context answer says so too,
    for a client to tell the session."""
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    headers = {"Authorization": f"Bearer {token}"}
    off = CaptureService(service, None, CaptureConfig(**MODELS))
    body = {"session_id": "http-off", "messages": [{"role": "user", "content": "hello"}]}
    with capture_app(service, off) as client:
        answer = client.post("/api/v1/capture", json=body, headers=headers)
        later = client.post("/api/v1/capture", json=body | {"first_index": 7}, headers=headers)
        context = client.post(
            "/api/v1/context",
            json={"session_id": "http-off", "event": "session_start"},
            headers=headers,
        )
    assert answer.status_code == 202
    assert (answer.json()["capture"], answer.json()["next_index"]) == ("off", 0)
    assert (later.json()["accepted"], later.json()["next_index"]) == (0, 7)
    assert context.json()["capture"] == "off"
    assert turns_of(owner_pool, principal, "http-off") == []
