"""Claude Code's auto memory kept in sync: POST /api/v1/import/claude-code (auth, scope, bad
input, isolation) in process, and the PostToolUse hook with Claude Code's own input shape and
the SessionStart catch-up, as processes against the real HTTP server and database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

from emergent_memory.auth.local_ids import derived_project_id, project_root
from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.hooks.auto_memory_files import origin
from emergent_memory.hooks.claude_settings import HOOK_MATCHERS, our_group
from emergent_memory.hooks.run import EVENTS
from emergent_memory.memory import MemoryService
from emergent_memory.memory.auto_memory_import import AutoMemoryImport, FolderFile
from tests.embedders import EmbeddingServer
from tests.helpers import HttpServer, make_token, running_http_server
from tests.test_rest_api import api_client, api_services

PATH = "/api/v1/import/claude-code"
ROLE = "---\nname: user_role\nmetadata:\n  type: user\n---\nThe user is a data engineer.\n"


@pytest.fixture
def client(service: MemoryService) -> Iterator[TestClient]:
    with api_client(service, api_services(service)) as connected:
        yield connected


def post(client: TestClient, token: str | None, body: Any) -> Any:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return client.post(PATH, content=json.dumps(body).encode(), headers=headers)


def imported(database_url: str, actor: uuid.UUID) -> list[tuple[str, int, bool, str]]:
    """(id, version, deleted, content) of the actor's memories, oldest first."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT canonical_id::text, version, deleted_at IS NOT NULL, properties->>'content' "
            "FROM kb.graph_objects WHERE actor_id = %s AND type = 'Memory' AND is_head "
            "ORDER BY created_at",
            (actor,),
        ).fetchall()
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def test_the_endpoint_imports_a_folder_and_forgets_a_deleted_file(
    client: TestClient, principal: Principal, database_url: str
) -> None:
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    body = {"folder": "-home-dev-src-shop", "files": [{"name": "user_role.md", "text": ROLE}]}
    first = post(client, token, body)
    assert first.status_code == 200, first.text
    answer = first.json()
    assert answer["counts"]["saved"] == 1
    assert answer["project_id"] == str(principal.project_id)
    [(memory_id, _, _, content)] = imported(database_url, principal.actor_id)
    assert answer["files"] == [
        {
            "file": "user_role.md",
            "status": "saved",
            "category": "preference",
            "scope": "user",
            "memory_id": memory_id,
        }
    ]
    assert content == "The user is a data engineer."
    assert post(client, token, body).json()["files"][0]["status"] == "unchanged"
    dry = post(
        client, token, {"folder": body["folder"], "deleted": ["user_role.md"], "dry_run": True}
    )
    assert dry.json()["files"] == [
        {"file": "user_role.md", "status": "forgotten", "memory_id": memory_id}
    ]
    assert imported(database_url, principal.actor_id)[0][2] is False  # the dry run wrote nothing
    gone = post(client, token, {"folder": body["folder"], "deleted": ["user_role.md"]})
    assert gone.json()["counts"]["forgotten"] == 1
    assert imported(database_url, principal.actor_id)[0][2] is True


def test_what_the_agent_writes_never_changes_or_deletes_what_the_user_imported(
    client: TestClient, service: MemoryService, principal: Principal, database_url: str
) -> None:
    """The hooks sync files the agent wrote (source inferred: a web page may have put the
    words there); `import --from claude-code` takes the user's own notes (explicit). An edit
    or a deletion the agent makes never changes or deletes the explicit memory (authority):
    the edit is kept beside it, and the deletion keeps it."""
    folder = "-home-dev-src-api"
    rule = "---\nname: push\nmetadata:\n  type: feedback\n---\nNever push directly to main.\n"
    report = AutoMemoryImport(service.pool, service).import_folder(
        principal, folder, [FolderFile("push.md", rule)]
    )
    assert report["counts"]["saved"] == 1
    [(users, _, _, _)] = imported(database_url, principal.actor_id)
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    edited = rule.replace("Never push directly to main.", "Push every change directly to main.")
    answer = post(client, token, {"folder": folder, "files": [{"name": "push.md", "text": edited}]})
    [outcome] = answer.json()["files"]
    assert outcome["status"] == "saved"
    assert "an inferred memory does not replace an explicit one" in outcome["reason"]
    rows = imported(database_url, principal.actor_id)
    assert rows[0] == (users, 1, False, "Never push directly to main.")  # as it was
    assert rows[1][1:] == (1, False, "Push every change directly to main.")
    sources = {m["id"]: m["source"] for m in service.list_memories(principal)["memories"]}
    assert sources == {users: "explicit", rows[1][0]: "inferred"}
    # a file of the user's import that the agent deletes: the memory stays
    other = "-home-dev-src-web"
    AutoMemoryImport(service.pool, service).import_folder(
        principal, other, [FolderFile("role.md", ROLE)]
    )
    gone = post(client, token, {"folder": other, "deleted": ["role.md"]}).json()["files"]
    assert gone[0]["status"] == "skipped"
    assert "its memory is kept" in gone[0]["reason"]
    assert [row[2:] for row in imported(database_url, principal.actor_id)][2] == (
        False,
        "The user is a data engineer.",
    )


def test_the_endpoint_needs_a_token_with_write_and_refuses_bad_input(
    client: TestClient, principal: Principal, database_url: str
) -> None:
    body = {"folder": "-p", "files": [{"name": "user_role.md", "text": ROLE}]}
    assert post(client, None, body).status_code == 401
    reader = make_token(database_url, principal.actor_id, principal.project_id, READ)[0]
    refused = post(client, reader, body)
    assert refused.status_code == 403
    assert "memory:write" in refused.json()["error"]["message"]
    writer = make_token(database_url, principal.actor_id, principal.project_id)[0]
    for bad, field in [
        ({"folder": "a/b", "files": []}, "folder"),
        ({"folder": "-p", "files": [{"name": "x.md"}]}, "files.0.text"),
        ({"folder": "-p", "files": [], "extra": 1}, "extra"),
        ({"folder": "-p", "files": "x"}, "files"),
        ({"folder": "-p", "origin": "../../etc", "files": []}, "origin"),
        ({"folder": "-p", "origin": "ABCDEF0123456789", "files": []}, "origin"),
    ]:
        answer = post(client, writer, bad)
        assert answer.status_code == 400, bad
        assert field in answer.json()["error"]["message"]
    elsewhere = post(client, writer, body | {"project_id": str(uuid.uuid4())})
    assert elsewhere.status_code == 403  # this token acts in its own project only
    assert imported(database_url, principal.actor_id) == []


def test_the_same_folder_name_from_another_origin_is_another_folder(
    client: TestClient, principal: Principal, database_url: str
) -> None:
    """Machine B's sync of a file named as one of machine A's never changes or forgets A's
    memory: the origin is part of the key."""
    token = make_token(database_url, principal.actor_id, principal.project_id)[0]
    here, there = "0123456789abcdef", "fedcba9876543210"
    rule = "---\nname: push\nmetadata:\n  type: feedback\n---\n{}\n"
    files = [{"name": "push.md", "text": rule.format("Push to the fork, never upstream.")}]
    body = {"folder": "-home-dev-src-shop", "origin": here, "files": files}
    first = post(client, token, body).json()
    assert first["origin"] == here
    [mine] = imported(database_url, principal.actor_id)
    theirs = [{"name": "push.md", "text": rule.format("Push straight to upstream.")}]
    second = post(client, token, body | {"origin": there, "files": theirs}).json()
    assert second["files"][0]["status"] == "saved"  # not an update of this origin's memory
    assert second["files"][0]["memory_id"] != mine[0]
    gone = post(client, token, {"folder": body["folder"], "origin": there, "deleted": ["push.md"]})
    assert gone.json()["counts"]["forgotten"] == 1
    rows = imported(database_url, principal.actor_id)
    assert rows[0] == mine  # version 1, not deleted, its own text
    assert rows[1][2] is True
    # no origin at all (a caller that sends none) is a key of its own as well
    none = post(client, token, {"folder": body["folder"], "deleted": ["push.md"]}).json()
    assert none["files"][0]["reason"] == "no memory came from it"


def test_another_actor_never_reaches_the_first_ones_memories(
    client: TestClient, database_url: str
) -> None:
    project = uuid.uuid4()
    first, second = uuid.uuid4(), uuid.uuid4()
    body = {"folder": "-shared", "files": [{"name": "user_role.md", "text": ROLE}]}
    assert post(client, make_token(database_url, first, project)[0], body).status_code == 200
    theirs = make_token(database_url, second, project)[0]
    gone = post(client, theirs, {"folder": "-shared", "deleted": ["user_role.md"]})
    assert gone.json()["files"] == [
        {"file": "user_role.md", "status": "skipped", "reason": "no memory came from it"}
    ]
    assert imported(database_url, first)[0][2] is False
    assert post(client, theirs, body).json()["files"][0]["status"] == "saved"  # its own


# -- the hooks ----------------------------------------------------------------------------------


def test_post_tool_use_is_installed_with_its_matcher() -> None:
    assert "PostToolUse" in EVENTS
    group = our_group("emergent-memory", "PostToolUse")
    assert group["matcher"] == HOOK_MATCHERS["PostToolUse"] == "Write|Edit|MultiEdit|Bash"
    assert group["hooks"][0]["command"] == "emergent-memory hook PostToolUse"
    assert "matcher" not in our_group("emergent-memory", "SessionStart")


class Session:
    """A Claude Code session in a temporary ~/.claude, its hooks run as Claude Code runs them,
    against the real server."""

    def __init__(self, tmp: Path, server: HttpServer, token: str) -> None:
        self.project_dir = tmp / "src" / "shop"
        self.project_dir.mkdir(parents=True)
        self.session_id = str(uuid.uuid4())
        folder = tmp / ".claude" / "projects" / "-tmp-src-shop"
        self.memory = folder / "memory"
        self.memory.mkdir(parents=True)
        self.transcript = folder / f"{self.session_id}.jsonl"
        self.transcript.write_text(
            json.dumps({"type": "user", "cwd": str(self.project_dir)}) + "\n"
        )
        self.data = tmp / "data"
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("EMERGENT_MEMORY_", "CLAUDE"))
        }
        self.env = base | {
            "EMERGENT_MEMORY_DATA_DIR": str(self.data),
            "EMERGENT_MEMORY_HOOK_CONFIG": str(tmp / "hooks.json"),
            "EMERGENT_MEMORY_HOOK_URL": server.base,
            "EMERGENT_MEMORY_HOOK_TOKEN": token,
        }

    def tool(self, tool_name: str, tool_input: dict[str, Any]) -> None:
        """Claude Code's PostToolUse input (2.1), as the hooks reference gives it."""
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project_dir),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_response": {"filePath": tool_input.get("file_path"), "success": True},
            "tool_use_id": "toolu_01" + uuid.uuid4().hex[:20],
        }
        self.hook("PostToolUse", payload)

    def hook(self, event: str, payload: dict[str, Any]) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "emergent_memory", "hook", event],
            input=json.dumps(payload).encode(),
            env=self.env,
            cwd=self.project_dir,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0
        return done.stdout.decode()

    def write(self, name: str, text: str) -> None:
        path = self.memory / name
        path.write_text(text)
        self.tool("Write", {"file_path": str(path), "content": text})

    @property
    def log(self) -> str:
        path = self.data / "logs" / "hooks.log"
        return path.read_text() if path.exists() else ""


def note(kind: str, body: str) -> str:
    return f"---\nname: n\nmetadata:\n  type: {kind}\n---\n{body}\n"


def test_the_hooks_send_what_claude_writes_edits_and_deletes(
    tmp_path: Path, database_url: str, embedding_server: EmbeddingServer
) -> None:
    actor = uuid.uuid4()
    with running_http_server(database_url, embedding_server) as server:
        token = make_token(database_url, actor, uuid.uuid4(), READ, WRITE, ANY_PROJECT)[0]
        session = Session(tmp_path, server, token)
        session.write("project_freeze.md", note("project", "Merge freeze from March 5."))
        [(freeze, version, deleted, _)] = imported(database_url, actor)
        assert (version, deleted) == (1, False)
        with psycopg.connect(database_url) as conn:
            where = conn.execute(
                "SELECT project_id FROM kb.graph_objects WHERE canonical_id = %s AND is_head",
                (freeze,),
            ).fetchone()
        # the session's project, as the hooks derive it for injection
        assert where == (derived_project_id(project_root(session.project_dir)),)

        edited = note("project", "Merge freeze from March 9.")
        (session.memory / "project_freeze.md").write_text(edited)
        session.tool(
            "Edit",
            {
                "file_path": str(session.memory / "project_freeze.md"),
                "old_string": "March 5",
                "new_string": "March 9",
            },
        )
        assert imported(database_url, actor) == [(freeze, 2, False, "Merge freeze from March 9.")]

        # a tool call elsewhere does nothing, even with a file changed meanwhile by hand
        (session.memory / "user_editor.md").write_text(note("user", "The user edits in Helix."))
        other = session.project_dir / "main.py"
        other.write_text("print(1)\n")
        session.tool("Write", {"file_path": str(other), "content": "print(1)\n"})
        assert len(imported(database_url, actor)) == 1

        (session.memory / "project_freeze.md").unlink()
        session.tool("Bash", {"command": f"rm {session.memory}/project_freeze.md"})
        assert imported(database_url, actor)[0][2] is True  # forgotten: deleted, restorable

        # SessionStart prints its context and leaves the catch-up to a detached run
        start = {
            "session_id": session.session_id,
            "transcript_path": str(session.transcript),
            "cwd": str(session.project_dir),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        session.hook("SessionStart", start)
        deadline = time.monotonic() + 60
        while len(imported(database_url, actor)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        contents = [row[3] for row in imported(database_url, actor)]
        assert contents[-1] == "The user edits in Helix."
    assert "Helix" not in session.log
    assert "March" not in session.log
    assert "auto memory synced" in session.log


def test_the_hooks_send_at_most_what_the_server_takes_and_say_where_the_folder_is(
    tmp_path: Path, database_url: str, embedding_server: EmbeddingServer
) -> None:
    """Requests are budgeted by their encoded size (the client escapes non-ASCII: an emoji
    costs 12 bytes), so no sync sticks on a 413: a file too large to go alone is left out
    (counted in the log), the rest goes over several syncs."""
    actor = uuid.uuid4()
    with running_http_server(database_url, embedding_server) as server:
        token = make_token(database_url, actor, uuid.uuid4(), READ, WRITE, ANY_PROJECT)[0]
        session = Session(tmp_path, server, token)
        for name in ("big_a.md", "big_b.md"):  # 240 KB on disk, 720 KB as the request's JSON
            (session.memory / name).write_text(note("user", "\U0001f600" * 60_000))
        for name in ("c.md", "d.md", "e.md"):  # 240 KB each in the request: two fit in one
            (session.memory / name).write_text(note("user", "\u4e2d" * 40_000))
        session.write("user_role.md", ROLE)
        assert imported(database_url, actor) == []  # c and d went first (too long to save)
        session.tool("Edit", {"file_path": str(session.memory / "user_role.md")})
        [(memory_id, _, _, content)] = imported(database_url, actor)
        assert content == "The user is a data engineer."
        with psycopg.connect(database_url) as conn:
            row = conn.execute(
                "SELECT properties->'imported_from' FROM kb.graph_objects "
                "WHERE canonical_id = %s AND is_head",
                (memory_id,),
            ).fetchone()
    assert row is not None
    keys = row[0]
    assert keys[0]["origin"] == origin(session.memory.parent)
    assert keys[0]["folder"] == "-tmp-src-shop"
    assert session.log.count("2 auto memory file(s) too large to send") == 2
    # no request was refused as too large (a process id such as [4130] may hold the digits)
    assert "answered 413" not in session.log
