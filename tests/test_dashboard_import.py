"""The dashboard's import page (/ui/import): an export file's current memories saved as
save_memory saves them, into the project shown, as the signed-in user; through the HTTP app
as `serve` builds it (the body guard included), on the real database."""

# ruff: noqa: F811  (the fixtures of test_dashboard.py, imported, are redefined as arguments)

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

from emergent_memory.auth.principal import ADMIN, ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.dashboard.web import CSRF_FIELD
from emergent_memory.memory import MemoryService, own_import
from tests.test_dashboard import (  # noqa: F401  (its fixtures)
    SAME_ORIGIN,
    client,
    csrf_of,
    sessions,
    sign_in,
    signed_in,
    token_for,
)

HEADER = {"kind": "header", "format": "emergent-memory-export", "version": 3}


def download(client: TestClient) -> str:
    response = client.get("/ui/export")
    assert response.status_code == 200
    return response.text


def upload(
    client: TestClient, content: str | bytes, *, filename: str = "memories.jsonl", **form: str
) -> Any:
    token = csrf_of(client.get("/ui/import").text)
    return client.post(
        "/ui/import",
        data={CSRF_FIELD: token, **form},
        files={"file": (filename, content, "application/x-ndjson")},
        headers=SAME_ORIGIN,
    )


def lines(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def memory_record(content: str, **changes: Any) -> dict[str, Any]:
    """An object record of a current memory, as an export writes it."""
    now = datetime.now(UTC).isoformat()
    identity = str(uuid.uuid4())
    record = {
        "kind": "object",
        "id": identity,
        "canonical_id": identity,
        "version": 1,
        "is_head": True,
        "project_id": str(uuid.uuid4()),
        "actor_id": str(uuid.uuid4()),
        "scope": "user",
        "type": "Memory",
        "key": None,
        "status": None,
        "properties": {"content": content, "category": "fact", "source": "explicit"},
        "labels": [],
        "embedding": None,
        "embedding_model": None,
        "deleted_at": None,
        "delete_reason": None,
        "created_at": now,
        "updated_at": now,
    }
    properties = changes.pop("properties", {})
    record["properties"] = {**record["properties"], **properties}  # type: ignore[dict-item]
    return record | changes


def row_counts(connect: Callable[[], psycopg.Connection[Any]], actor: uuid.UUID) -> tuple[int, ...]:
    """The actor's rows: objects, relationships, evidence and recalls (every version)."""
    with connect() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM kb.graph_objects WHERE actor_id = %(a)s), "
            "(SELECT count(*) FROM kb.graph_relationships WHERE actor_id = %(a)s), "
            "(SELECT count(*) FROM kb.memory_evidence WHERE actor_id = %(a)s), "
            "(SELECT max(updated_at) FROM kb.graph_objects WHERE actor_id = %(a)s)",
            {"a": actor},
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_download_imported_by_another_user_carries_each_current_memory_and_its_details(
    client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    service.save(
        principal,
        "The release train leaves every second Tuesday",
        "decision",
        "explicit",
        "project",
        "releases",
        importance="high",
        rationale="QA needs a full week",
        evidence="decided in the planning meeting",
        valid_until="2027-06-30",
    )
    service.save(principal, "The user writes commit messages in English", "preference",
                 context="git")  # fmt: skip
    service.save(principal, "The user writes commit messages in English", "preference",
                 context="writing")  # fmt: skip
    old = service.save(principal, "Staging runs on Kubernetes 1.29", "fact", "explicit")
    new = service.save(principal, "The staging cluster was upgraded to Kubernetes 1.31", "fact")
    if new["status"] != "updated":  # kept beside it: replaced by hand
        service.supersede(principal, new["memory"]["id"], old["memory"]["id"])
    gone = service.save(principal, "The build cache lives on the old NFS share", "fact")
    service.delete(principal, gone["memory"]["id"])
    assert sign_in(client, token_for(principal)).status_code == 303
    exported = download(client)
    client.cookies.clear()

    other = Principal(uuid.uuid4(), uuid.uuid4())
    assert sign_in(client, token_for(other)).status_code == 303
    answer = upload(client, exported)
    assert answer.status_code == 200, answer.text
    assert 'id="import-report"' in answer.text
    assert 'id="count-added"' in answer.text
    mine = {m["content"]: m for m in service.list_memories(other, limit=50)["memories"]}
    assert set(mine) == {
        "The release train leaves every second Tuesday",
        "The user writes commit messages in English",
        "The staging cluster was upgraded to Kubernetes 1.31",
    }
    train = mine["The release train leaves every second Tuesday"]
    assert train["scope"] == "project"  # in the project shown, not the file's
    assert train["importance"] == "high"
    assert train["rationale"] == "QA needs a full week"
    assert train["source"] == "explicit"
    assert train["valid_until"].startswith("2027-06-30")
    assert train["contexts"] == ["releases"]
    assert sorted(mine["The user writes commit messages in English"]["contexts"]) == [
        "git",
        "writing",
    ]
    with connect() as conn:
        evidence = conn.execute(
            "SELECT evidence FROM kb.memory_evidence WHERE canonical_id = %s", (train["id"],)
        ).fetchall()
    assert evidence == [("decided in the planning meeting",)]
    # the first user's memories are as they were
    theirs = service.list_memories(principal, limit=50)["memories"]
    assert len(theirs) == 3
    assert {m["id"] for m in theirs}.isdisjoint(m["id"] for m in mine.values())
    # what was left out is said
    assert "earlier versions of memories (history)" in answer.text
    assert "superseded memories" in answer.text
    assert "deleted memories" in answer.text


def test_importing_a_file_again_writes_nothing(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    service.save(principal, "The staging database listens on port 5433", "fact", context="db")
    service.save(principal, "Never push directly to main", "instruction", importance="core")
    exported = download(signed_in)
    before = row_counts(connect, principal.actor_id)
    answer = upload(signed_in, exported)
    assert answer.status_code == 200
    assert 'id="count-unchanged"' in answer.text
    assert "0 written" in answer.text
    assert row_counts(connect, principal.actor_id) == before


def test_a_memory_with_a_secret_is_refused_unshown_and_the_others_are_saved(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    secret = "AKIA" + "Q7RN4XW2ZB5TLM3P"
    file = lines(
        HEADER,
        memory_record(f"The deploy key is {secret}"),
        memory_record("Deploys need two approvals <script>alert(1)</script>"),
        memory_record("x", properties={"category": "feeling"}),
    )
    answer = upload(signed_in, file, filename='<img src=x onerror="alert(2)">.jsonl')
    assert answer.status_code == 200
    assert secret not in answer.text
    assert "(not shown: it holds what looks like a secret)" in answer.text
    assert "<script>alert(1)</script>" not in answer.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer.text
    assert "<img src=x" not in answer.text
    assert 'id="count-refused"' in answer.text
    assert "category must be one of" in answer.text
    contents = [m["content"] for m in service.list_memories(principal)["memories"]]
    assert contents == ["Deploys need two approvals <script>alert(1)</script>"]


GOOD = memory_record("A memory before the bad line")


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("", "choose an export file"),
        (b"\xff\xfe binary", "line 1: not UTF-8 text"),
        ("not json\n", "line 1: not a JSON record"),
        (lines(memory_record("no header first")), "the first record must be its header"),
        (lines(HEADER | {"version": 99}), "newer than this emergent-memory reads"),
        (lines({"kind": "header", "format": "other"}), "not an emergent-memory export"),
        (lines(HEADER, GOOD, {"kind": "object", "id": "x"}), "line 3: invalid object record"),
        (lines(HEADER, GOOD, {"kind": "photo"}), "line 3: unknown record kind 'photo'"),
        (lines(HEADER, GOOD) + "[1, 2]\n", "line 3: a record must be a JSON object"),
        (lines(HEADER, GOOD) + "{oops\n", "line 3: not a JSON record"),
        ("\n\n", "the file is empty"),
    ],
)
def test_a_file_that_is_not_an_export_is_refused_and_nothing_is_written(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    file: str | bytes,
    message: str,
) -> None:
    answer = upload(signed_in, file, filename="" if file == "" else "memories.jsonl")
    assert answer.status_code == 400, answer.text
    assert 'id="import-error"' in answer.text
    assert message.replace("'", "&#39;") in answer.text
    assert service.list_memories(principal)["memories"] == []


def test_more_memories_than_one_import_takes_is_refused(
    signed_in: TestClient,
    service: MemoryService,
    principal: Principal,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(own_import, "MAX_MEMORIES", 2)
    file = lines(HEADER, *(memory_record(f"Service {n} runs on port {8000 + n}") for n in range(3)))
    answer = upload(signed_in, file)
    assert answer.status_code == 400
    assert "the page imports at most 2 at once" in answer.text
    assert service.list_memories(principal)["memories"] == []


def test_global_memories_and_history_are_left_out_and_said(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    earlier = memory_record("Old wording", is_head=False)
    file = lines(
        HEADER,
        earlier,
        memory_record("Everyone uses UTC in logs", scope="global"),
        memory_record("An archived fact", properties={"archived_at": "2026-01-01T00:00:00Z"}),
        memory_record("Kept: CI runs on every push"),
        {"kind": "recall", "canonical_id": earlier["canonical_id"], "actor_id": None,
         "project_id": earlier["project_id"], "recalled_at": earlier["created_at"]},
    )  # fmt: skip
    answer = upload(signed_in, file)
    assert answer.status_code == 200
    text = answer.text
    assert "archived memories: 1" in text
    assert "earlier versions of memories (history): 1" in text
    assert "global memories (an operator imports them with emergent-memory import): 1" in text
    assert "recall history: 1" in text
    contents = [m["content"] for m in service.list_memories(principal)["memories"]]
    assert contents == ["Kept: CI runs on every push"]


def test_a_file_larger_than_other_requests_may_be_is_taken(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    """The server's requests are capped at 1 MiB here (EMERGENT_MEMORY_MAX_REQUEST_BYTES);
    the import page takes an export of several MB (embeddings make them large)."""
    record = memory_record("The large export's one current memory")
    padding = [
        {"kind": "recall", "canonical_id": record["canonical_id"], "actor_id": None,
         "project_id": record["project_id"], "recalled_at": f"2026-01-01T00:00:{n % 60:02d}Z",
         "query": "q" * 400}
        for n in range(4000)
    ]  # fmt: skip
    file = lines(HEADER, record, *padding)
    assert len(file) > 1_500_000
    answer = upload(signed_in, file)
    assert answer.status_code == 200, answer.text[:500]
    assert "recall history: 4000" in answer.text
    assert [m["content"] for m in service.list_memories(principal)["memories"]] == [
        "The large export's one current memory"
    ]


def test_an_upload_over_the_page_limit_is_refused_before_it_is_read(
    signed_in: TestClient,
) -> None:
    too_large = signed_in.post(
        "/ui/import",
        content=b"x" * 10,
        headers={
            **SAME_ORIGIN,
            "content-type": "multipart/form-data; boundary=b",
            "content-length": str(200 * 1024 * 1024),
        },
    )
    assert too_large.status_code == 413
    assert "split the file" in too_large.text
    no_length = signed_in.post(  # a body of no declared length is not taken either
        "/ui/import",
        content=iter([b"x" * 10]),
        headers={**SAME_ORIGIN, "content-type": "multipart/form-data; boundary=b"},
    )
    assert no_length.status_code == 411


def test_readers_the_signed_out_and_a_switched_project_are_refused(
    client: TestClient,
    service: MemoryService,
    principal: Principal,
    token_for: Callable[..., str],
) -> None:
    file = lines(HEADER, memory_record("A memory nobody may import here"))
    refused = client.post(
        "/ui/import", files={"file": ("m.jsonl", file)}, headers=SAME_ORIGIN
    )  # signed out: refused before the body is read
    assert refused.status_code == 403
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    assert client.get("/ui/import").status_code == 403
    page = client.get("/ui/memories")
    forged = client.post(
        "/ui/import",
        data={CSRF_FIELD: csrf_of(page.text)},
        files={"file": ("m.jsonl", file)},
        headers=SAME_ORIGIN,
    )
    assert forged.status_code == 403
    client.cookies.clear()
    chooser = Principal(principal.actor_id, principal.project_id, frozenset({READ, WRITE}))
    assert sign_in(client, token_for(chooser, READ, WRITE, ANY_PROJECT)).status_code == 303
    switched = upload(client, file, project=str(uuid.uuid4()))
    assert switched.status_code == 409
    assert "switched in another tab" in switched.text
    assert service.list_memories(principal)["memories"] == []


def test_an_admins_import_still_saves_only_as_its_own_actor(
    client: TestClient,
    service: MemoryService,
    token_for: Callable[..., str],
    connect: Callable[[], psycopg.Connection[Any]],
) -> None:
    admin = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))
    victim = uuid.uuid4()
    assert sign_in(client, token_for(admin, READ, WRITE, ADMIN)).status_code == 303
    record = memory_record("Written as someone else?", actor_id=str(victim), scope="project")
    answer = upload(client, lines(HEADER, record))
    assert answer.status_code == 200
    with connect() as conn:
        owners = conn.execute(
            "SELECT actor_id FROM kb.graph_objects WHERE properties ->> 'content' = %s",
            ("Written as someone else?",),
        ).fetchall()
    assert owners == [(admin.actor_id,)]  # never the file's actor, never its id


def test_memories_are_saved_in_the_order_they_were_written_not_the_files(
    signed_in: TestClient, service: MemoryService, principal: Principal
) -> None:
    """An export orders objects by id: the import saves them oldest change first, so that a
    value that replaced another is the newer side here too."""
    newer = memory_record("The CI pipeline runs on Node 22", created_at="2026-03-01T00:00:00+00:00")
    older = memory_record("The CI pipeline runs on Node 20", created_at="2026-01-01T00:00:00+00:00")
    answer = upload(signed_in, lines(HEADER, newer, older))
    assert answer.status_code == 200
    assert answer.text.index('id="imported-3"') < answer.text.index('id="imported-2"')
    found = service.recall(principal, "which Node version does the CI pipeline run on")
    assert found["memories"][0]["content"] == "The CI pipeline runs on Node 22"
