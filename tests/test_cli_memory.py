"""The memory commands of the CLI, in process, on the test database.

The embedding provider is the OpenAI-compatible one pointed at a loopback server (fast and
deterministic); the local model is exercised by the stdio end-to-end test.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import termios
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.cli import cli
from emergent_memory.cli.output import Screen, cell
from emergent_memory.db import migrate
from emergent_memory.memory import store
from emergent_memory.memory.browse import MemoryDetail
from tests.embedders import EmbeddingServer

Run = Callable[..., Result]
MEMORY_DOCS = Path(__file__).resolve().parent.parent / "docs" / "memory.md"


@pytest.fixture
def make_env(embedding_server: EmbeddingServer) -> Callable[[str], dict[str, str]]:
    def env(url: str) -> dict[str, str]:
        return {
            "EMERGENT_MEMORY_DATABASE_URL": url,
            "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
            "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
            "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
            "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
            "EMERGENT_MEMORY_ACTOR_ID": str(uuid.uuid4()),
            "EMERGENT_MEMORY_PROJECT_ID": str(uuid.uuid4()),
        }

    return env


@pytest.fixture
def env(make_env: Callable[[str], dict[str, str]], database_url: str) -> dict[str, str]:
    return make_env(database_url)


@pytest.fixture
def run(env: dict[str, str]) -> Run:
    def invoke(*args: str, input: str | None = None, **more_env: str) -> Result:
        return CliRunner().invoke(cli, list(args), env=env | more_env, input=input)

    return invoke


def short(memory_id: str) -> str:
    """A memory's id as the tables show it (alone among the ids shown: 8 hex digits)."""
    return memory_id.replace("-", "")[:8]


def ok(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if result.stdout.lstrip().startswith(("{", "[")) else None


def test_save_recall_list_forget(run: Run) -> None:
    saved = ok(run("save", "The user prefers tabs", "--category", "preference", "--json"))
    assert saved["status"] == "created"
    memory_id = saved["memory"]["id"]
    again = ok(run("save", "the user prefers TABS", "-c", "preference", "--json"))
    assert again["status"] == "unchanged"

    human = run("recall", "tabs")
    assert human.exit_code == 0
    assert re.search(
        rf"^1  0\.\d{{3}}  +{short(memory_id)}  preference  now  +The user prefers tabs$",
        human.stdout,
        flags=re.MULTILINE,
    ), human.stdout
    recalled = ok(run("recall", "tabs", "--json"))
    assert [m["id"] for m in recalled["memories"]] == [memory_id]

    listed = ok(run("list", "--json"))
    assert listed["count"] == 1
    assert "1 memories" in run("list").stdout

    assert ok(run("forget", memory_id, "--json")) == {"deleted": memory_id}
    assert ok(run("list", "--json"))["count"] == 0


def test_forget_all_asks_first(run: Run) -> None:
    ok(run("save", "One", "-c", "fact"))
    ok(run("save", "Two", "-c", "fact"))
    refused = run("forget", "--all")  # no terminal: refuses instead of guessing
    assert refused.exit_code == 1
    assert "needs --yes" in refused.output
    assert ok(run("forget", "--all", "--yes", "--json")) == {"deleted_count": 2}
    neither = run("forget")
    assert neither.exit_code == 1
    assert "give either a memory id or --all" in neither.output


def test_errors_are_one_line_and_a_failure(run: Run) -> None:
    for args, message in (
        (["save", "", "-c", "fact"], "error: content is empty"),
        (["save", "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "-c", "fact"], "GitHub"),
        (["forget", str(uuid.uuid4())], "not found"),
        (["recall", "x", "--limit", "0"], "limit must be from 1 to 50"),
    ):
        result = run(*args)
        assert result.exit_code == 1
        assert message in result.output
        assert result.output.count("\n") == 1


def test_stats(run: Run, env: dict[str, str]) -> None:
    ok(run("save", "Ruff is the linter", "-c", "convention"))
    ok(run("save", "Ruff is the linter", "-c", "convention", "--scope", "project"))
    stats = ok(run("stats", "--json"))
    assert stats["actor_id"] == env["EMERGENT_MEMORY_ACTOR_ID"]
    assert stats["active"] == 2
    [project] = stats["projects"]
    assert project["by_category"]["convention"] == 2
    assert "2 active" in run("stats").stdout


def test_reembed(run: Run) -> None:
    ok(run("save", "Queues are RabbitMQ", "-c", "fact"))
    result = ok(run("reembed", "--json", EMERGENT_MEMORY_EMBEDDING_MODEL="test-remote-2"))
    assert result["model"] == "test-remote-2"
    assert result["remaining"] == 0
    wrong = run("reembed", "--model", "other", EMERGENT_MEMORY_EMBEDDING_PROVIDER="local")
    assert wrong.exit_code == 1
    assert "the local provider has one model" in wrong.output
    # put the shared database back on the model the other tests use
    ok(run("reembed", "--model", "test-remote"))
    # with the model in use, nothing to do: a vector already from it is kept, and it says so
    again = run("reembed", "--model", "test-remote")
    assert again.exit_code == 0
    assert "re-embedded 0 memories: every memory already has a vector from test-remote" in (
        again.stdout
    )


def test_tokens(run: Run) -> None:
    created = ok(run("token", "create", "--name", "laptop", "--json"))
    assert created["token"].startswith("emt_")
    assert created["scopes"] == ["memory:read", "memory:write"]
    listed = ok(run("token", "list", "--json"))
    mine = [t for t in listed if t["id"] == created["id"]]
    assert mine[0]["prefix"] == created["token"][:12]
    assert all("token" not in t for t in listed)
    assert f"revoked token {created['id']}" in run("token", "revoke", created["id"]).stdout
    [revoked] = [t for t in ok(run("token", "list", "--json")) if t["id"] == created["id"]]
    assert revoked["revoked_at"] is not None
    bad = run("token", "create", "--name", "x", "--scope", "memory:everything")
    assert bad.exit_code == 2  # click refuses the choice


def test_export_import_round_trip_keeps_ids_and_results(
    run: Run,
    make_env: Callable[[str], dict[str, str]],
    make_database: Callable[[], str],
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    saved = [
        ok(run("save", text, "-c", "fact", "--context", "infra", "--json"))["memory"]["id"]
        for text in ("Builds run on Buildkite", "Artifacts go to S3 bucket builds-main")
    ]
    ok(run("save", "Builds run on Buildkite agents", "-c", "fact"))  # supersedes the first
    before = ok(run("recall", "builds", "--json"))

    dump = tmp_path / "memories.jsonl"
    result = run("export", str(dump), "--actor", env["EMERGENT_MEMORY_ACTOR_ID"])
    assert result.exit_code == 0, result.output
    lines = dump.read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "header"

    target = make_database()
    migrate.upgrade(target)
    target_env = make_env(target) | {
        "EMERGENT_MEMORY_ACTOR_ID": env["EMERGENT_MEMORY_ACTOR_ID"],
        "EMERGENT_MEMORY_PROJECT_ID": env["EMERGENT_MEMORY_PROJECT_ID"],
    }

    def in_target(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), env=target_env)

    first = ok(in_target("import", str(dump), "--json"))
    assert first["objects"]["inserted"] > 0
    second = ok(in_target("import", str(dump), "--json"))
    assert all(counts["inserted"] == 0 for counts in second.values())
    after = ok(in_target("recall", "builds", "--json"))
    assert [m["id"] for m in after["memories"]] == [m["id"] for m in before["memories"]]
    assert [m["contexts"] for m in after["memories"]] == [m["contexts"] for m in before["memories"]]
    assert saved[1] in {m["id"] for m in after["memories"]}


def test_import_refuses_garbage(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"kind": "header", "format": "emergent-memory-export", "version": 1}\nnot json\n'
    )
    result = run("import", str(bad))
    assert result.exit_code == 1
    assert "line 2 is not JSON" in result.output


def test_demo_runs_the_whole_story(run: Run, local_embedder: object) -> None:
    result = run("demo", EMERGENT_MEMORY_EMBEDDING_PROVIDER="local")  # the real model
    assert result.exit_code == 0, result.output
    # six active memories (issue 13: forget_all counts the active ones; a restored one is)
    for line in (
        "created",
        "unchanged",
        "updated",
        "kept apart from 'Service A listens on port 9001'",
        "text rank 1",
        "deleted 6 memories",
    ):
        assert line in result.stdout


def test_list_status_and_restore(run: Run) -> None:
    saved = ok(run("save", "The user's bike is a grey Brompton", "-c", "fact", "--json"))
    memory_id = saved["memory"]["id"]
    ok(run("forget", memory_id, "--json"))
    human = run("list", "--status", "deleted")
    assert human.exit_code == 0, human.output
    assert f"{short(memory_id)}  fact" in human.stdout
    assert "1 deleted memories" in human.stdout
    restored = run("restore", memory_id)
    assert restored.exit_code == 0, restored.output
    assert restored.stdout == f"restored {memory_id} (it was deleted)\n"
    assert ok(run("list", "--json"))["count"] == 1
    again = run("restore", memory_id)
    assert again.exit_code == 1
    assert f"memory {memory_id} is active; there is nothing to restore" in again.stderr
    unknown = run("list", "--status", "expired")
    assert unknown.exit_code == 2  # click's usage error names the choices
    assert "'expired' is not one of 'active', 'superseded', 'deleted', 'archived'" in unknown.output


def test_save_with_lifecycle_options_then_reinforce_and_verify(run: Run) -> None:
    saved = ok(
        run(
            "save",
            "The release branch is cut on Tuesdays",
            "-c",
            "decision",
            "--importance",
            "high",
            "--evidence",
            "release meeting notes",
            "--valid-from",
            "2026-01-01",
            "--valid-until",
            "2030-01-01",
            "--rationale",
            "QA works Wednesdays to Fridays",
            "--json",
        )
    )
    memory = saved["memory"]
    memory_id = memory["id"]
    assert (memory["importance"], memory["rationale"]) == ("high", "QA works Wednesdays to Fridays")
    assert (memory["valid_from"], memory["valid_until"]) == (
        "2026-01-01T00:00:00Z",
        "2030-01-01T00:00:00Z",
    )
    assert memory["evidence_count"] == 1

    human = run("reinforce", memory_id, "--evidence", "the user: yes, Tuesdays")
    assert human.exit_code == 0, human.output
    assert human.stdout == (
        f"reinforced {memory_id}: confidence 0.700 -> 0.775; 2 pieces of evidence\n"
    )
    again = run("reinforce", memory_id, "--evidence", "The user: yes, Tuesdays", "--json")
    assert ok(again)["independent"] is False
    missing = run("reinforce", memory_id)
    assert missing.exit_code == 2  # click: --evidence is required
    assert "Missing option '--evidence'" in missing.output

    confirmed = ok(run("verify", "The release branch is cut on Tuesdays", "--json"))
    assert confirmed["verdict"] == "confirmed"
    assert confirmed["matches"][0]["id"] == memory_id
    shown = run("verify", "The release branch is cut on Thursdays")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("conflict: ")
    assert re.search(rf"^conflicts  0\.\d\d  +{short(memory_id)}  decision ", shown.stdout, re.M)
    assert ok(run("verify", "The office plant needs water", "--json"))["verdict"] == "new"
    # the embedder down: degraded, only the words compared (the judge is not the cause)
    degraded = run(
        "verify",
        "The release branch is cut on Tuesdays",
        EMERGENT_MEMORY_EMBEDDING_BASE_URL="http://127.0.0.1:9/v1",
    )
    assert degraded.exit_code == 0, degraded.output
    assert "the embedding model was unavailable, only words were compared" in degraded.stdout
    assert "judge" not in degraded.stdout

    listed = run("list")
    assert "importance high, valid 2026-01-01T00:00:00Z to 2030-01-01T00:00:00Z" in listed.stdout
    assert "why: QA works Wednesdays to Fridays" in listed.stdout


def test_archive_restore_and_reasons(run: Run) -> None:
    memory_id = ok(run("save", "The team lunch is on Fridays", "-c", "fact", "--json"))["memory"][
        "id"
    ]
    archived = run("archive", memory_id, "--reason", "the team moved to remote work")
    assert archived.exit_code == 0, archived.output
    assert archived.stdout == f"archived {memory_id}\n"
    assert ok(run("recall", "team lunch", "--json"))["memories"] == []
    found = ok(run("recall", "team lunch", "--include-archived", "--json"))
    assert [m["id"] for m in found["memories"]] == [memory_id]
    assert found["memories"][0]["archived_at"] is not None
    shown = run("recall", "team lunch", "--include-archived").stdout
    at = datetime.fromisoformat(found["memories"][0]["archived_at"])
    assert f"archived {at:%Y-%m-%d %H:%M} UTC; `restore` brings it back" in shown
    listed = run("list", "--status", "archived")
    assert "(the team moved to remote work)" in listed.stdout
    assert "1 archived memories" in listed.stdout
    restored = run("restore", memory_id)
    assert restored.stdout == f"restored {memory_id} (it was archived)\n"
    ok(run("forget", memory_id, "--reason", "the user asked"))
    [deleted] = ok(run("list", "--status", "deleted", "--json"))["memories"]
    assert deleted["delete_reason"] == "the user asked"
    both = run("forget", "--all", "--yes", "--reason", "x")
    assert both.exit_code == 1
    assert "--reason is kept with one deleted memory" in both.output


def test_recall_as_of(run: Run) -> None:
    memory_id = ok(
        run(
            "save", "The API gateway is Kong", "-c", "fact", "--valid-until", "2030-03-01", "--json"
        )
    )["memory"]["id"]
    during = ok(run("recall", "API gateway", "--as-of", "2030-02-01", "--json"))
    assert [m["id"] for m in during["memories"]] == [memory_id]
    assert ok(run("recall", "API gateway", "--as-of", "2030-03-01", "--json"))["memories"] == []
    bad = run("recall", "API gateway", "--as-of", "next week")
    assert bad.exit_code == 1
    assert "as_of" in bad.output


def test_the_command_line_session_in_the_memory_docs_runs(run: Run) -> None:
    """docs/memory.md's lifecycle session, command by command, as written (ID: the id the
    first command saved), each saying what the docs say it does."""
    [block] = re.findall(r"```sh\n(.*?)```", MEMORY_DOCS.read_text(), flags=re.DOTALL)
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert all(command[0] == "emergent-memory" for command in commands)
    memory_id = ok(run(*commands[0][1:], "--json"))["memory"]["id"]
    expected = [
        "conflict: ",  # verify
        f"reinforced {memory_id}: confidence 0.700 -> 0.775",
        "nothing relevant (no memory reaches relevance",  # as of the end of its validity
        f"archived {memory_id}",
        f"{short(memory_id)}  fact      now  archived  The staging",  # recall --include-archived
        "1 archived memories",
        f"restored {memory_id} (it was archived)",
        f"deleted {memory_id}",
    ]
    assert len(commands) == 1 + len(expected)
    for command, output in zip(commands[1:], expected, strict=True):
        result = run(*[memory_id if arg == "ID" else arg for arg in command[1:]])
        assert result.exit_code == 0, (command, result.output)
        assert output in result.stdout, (command, result.stdout)


def test_save_keeps_the_reason_of_a_supersession(run: Run) -> None:
    old = ok(run("save", "Production deploys happen on Fridays", "-c", "fact", "--json"))
    old = old["memory"]["id"]
    new = ok(
        run(
            "save",
            "On Fridays production deploys happen",  # the same words: the test model's 1.0
            "-c",
            "fact",
            "--supersede-reason",
            "more precise",
            "--json",
        )
    )
    assert new["superseded_ids"] == [old]
    listed = run("list", "--status", "superseded")
    # what replaced it, in words: the rule and similarity, then the reason given
    replaced_by = short(new["memory"]["id"])
    assert f"superseded by {replaced_by}: replaced because the save rule: " in listed.stdout
    assert "reason given: more precise" in listed.stdout


def test_save_says_why_a_close_memory_from_a_stronger_source_was_kept(run: Run) -> None:
    calibrated = {"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.8"}
    said = ok(
        run(
            "save", "Deploys to production happen on Fridays", "-c", "fact",
            "--source", "explicit", "--json", **calibrated,
        )
    )  # fmt: skip
    inferred = run(
        "save", "Production deploys happen on Fridays", "-c", "fact", "--source", "inferred",
        **calibrated,
    )  # fmt: skip
    assert inferred.exit_code == 0, inferred.output
    assert f"kept beside {said['memory']['id']}" in inferred.stdout
    assert "an inferred memory does not replace an explicit one" in inferred.stdout
    listed = ok(run("list", "--json"))
    assert len(listed["memories"]) == 2


def test_list_and_save_say_which_memories_conflict(run: Run) -> None:
    calibrated = {"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.8"}
    old = ok(run("save", "The staging database of the shop listens on port 5432", "-c", "fact",
                 "--json", **calibrated))  # fmt: skip
    saved = run(
        "save", "The staging database of the shop listens on port 5433", "-c", "fact", **calibrated
    )
    assert saved.exit_code == 0, saved.output
    assert f"conflicts with {old['memory']['id']}" in saved.stdout
    listed = run("list")
    assert "(this one is the current value)" in listed.stdout
    assert "(this one is outranked)" in listed.stdout


def test_review_lists_the_queue_and_decides_and_undoes_by_short_ids(
    run: Run, env: dict[str, str]
) -> None:
    """The review queue at the terminal (the dashboard's and REST's /duplicates): a conflict
    is listed with both memories and why; keep-both settles it and undo relinks it; supersede
    keeps one and undo restores the other; merge gives the kept one the merged text. Bad
    input and another user's pair are refused with nothing changed."""
    calibrated = {"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.8"}
    old = ok(run("save", "The staging database of the shop listens on port 5432", "-c", "fact",
                 "--json", **calibrated))["memory"]["id"]  # fmt: skip
    new = ok(run("save", "The staging database of the shop listens on port 5433", "-c", "fact",
                 "--json", **calibrated))["memory"]["id"]  # fmt: skip
    listed = ok(run("review", "list", "--json"))
    [pair] = listed["pairs"]
    assert (pair["memory"]["id"], pair["duplicate_of"]["id"], pair["conflict"]) == (new, old, True)
    assert listed["next_cursor"] is None
    shown = run("review")  # `review` alone lists
    assert shown.exit_code == 0, shown.output
    page = shown.stdout
    pair_id = short(pair["id"])
    assert re.search(
        rf"^{pair_id}  conflict  0\.\d\d  +{short(new)}  fact +now  conflict  +The staging "
        r"database of the shop listens on port 5433$",
        page,
        re.M,
    ), page
    assert re.search(rf"^ +{short(old)}  fact +now  outranked  The staging .+ 5432$", page, re.M)
    assert f"why: {pair['why']}" in page
    assert "1 pair. Decide: review keep-both PAIR" in page

    # both true: the conflict is gone; undo makes it again
    assert run("review", "keep-both", pair_id).stdout == f"kept both of pair {pair['id']}\n"
    assert run("review").stdout == "Nothing waits for a decision.\n"
    assert "outranked" not in run("list").stdout
    again = run("review", "keep-both", pair_id)
    assert (again.exit_code, again.stderr) == (
        1,
        f"error: possible duplicate {pair['id']} was decided already (keep_both)\n",
    )
    undone = ok(run("review", "undo", pair_id, "--json"))
    assert (undone["undone"], undone["relinked"]) == ("keep_both", True)
    assert undone["restored_id"] is None
    assert "(this one is outranked)" in run("list").stdout

    # the older value wins: the newer is superseded by it; undo restores the newer
    kept_old = run("review", "supersede", pair_id, "--keep", short(old))
    assert kept_old.stdout == (f"supersede pair {pair['id']}: kept {old}, superseded {new}\n"), (
        kept_old.output
    )
    superseded = ok(run("list", "--status", "superseded", "--json"))["memories"]
    assert [m["id"] for m in superseded] == [new]
    # the supersession settled the conflict: neither side says it is in one any more
    assert (superseded[0]["conflicts_with"], superseded[0]["conflict"]) == ([], None)
    page = run("show", short(new)).stdout
    assert re.search(r"^status +superseded$", page, re.M), page
    assert "outranked" not in page, page
    assert "conflicts " not in page, page
    assert "(this one" not in run("show", short(old)).stdout
    assert run("review", "undo", pair_id).stdout == (
        f"pair {pair['id']} waits for a decision again (supersede undone); restored {new}\n"
    )
    assert {m["id"] for m in ok(run("list", "--json"))["memories"]} == {old, new}
    # restored, the conflict is back
    assert "(this one is outranked)" in run("show", short(old)).stdout

    # refused, nothing written: a memory not of the pair, a pair id nobody has, an undo of a
    # pair that waits, a short id too short, another user's pair (not found, as nobody's)
    unrelated = ok(run("save", "The shop's logo is teal", "-c", "fact", "--json"))["memory"]["id"]
    for args, message in (
        (
            ("supersede", pair_id, "--keep", short(unrelated)),
            f"keep must be one of the pair: {new} or {old}",
        ),
        (("keep-both", "00000000ff"), "possible duplicate 00000000ff not found"),
        (("undo", pair_id), f"possible duplicate {pair['id']} waits for a decision"),
        (
            ("keep-both", "abc"),
            "PAIR 'abc' is not a pair id: give the id `review` shows (at "
            "least 8 hex digits) or the whole id",
        ),
        (("supersede", pair_id), "Missing option '--keep'"),
    ):
        refused = run("review", *args)
        assert refused.exit_code != 0, args
        assert message in refused.output, (args, refused.output)
    other = {"EMERGENT_MEMORY_ACTOR_ID": str(uuid.uuid4())}
    theirs = run("review", "keep-both", pair["id"], **other)
    assert (theirs.exit_code, theirs.stderr) == (
        1,
        f"error: possible duplicate {pair['id']} not found\n",
    )
    assert run("review", **other).stdout == "Nothing waits for a decision.\n"
    assert [p["id"] for p in ok(run("review", "list", "--json"))["pairs"]] == [pair["id"]]

    # merge: the kept memory gets the merged text as a new version, the other is superseded
    merged = ok(
        run("review", "merge", pair_id, "--keep", short(new), "--json", "--content",
            "The staging database of the shop listens on port 5433 (it was 5432)")
    )  # fmt: skip
    assert (merged["decision"], merged["kept_id"], merged["superseded_ids"]) == (
        "merge",
        new,
        [old],
    )
    assert merged["memory"]["content"].endswith("(it was 5432)")
    assert run("review").stdout == "Nothing waits for a decision.\n"


# -- output for people: show, short ids, tables on a terminal and piped (issue 28) --------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def stored(
    pool: ConnectionPool, env: dict[str, str], content: str, canonical_id: uuid.UUID | None = None
) -> str:
    """A fact of `env`'s actor, written straight to the graph (no embedding): quick, and with a
    chosen id when the test needs two ids that begin alike."""
    actor, project = (
        uuid.UUID(env["EMERGENT_MEMORY_ACTOR_ID"]),
        uuid.UUID(env["EMERGENT_MEMORY_PROJECT_ID"]),
    )
    with pool.connection() as conn, conn.transaction():
        graph.act_as(conn, actor, project)
        graph.install_pack(conn, project, "agent-memory")
        made = graph.create_object(
            conn,
            project_id=project,
            type=store.MEMORY,
            actor_id=actor,
            scope="user",
            properties={"content": content, "category": "fact"},
            labels=["fact"],
            canonical_id=canonical_id,
        )
    return str(made.canonical_id)


def test_show_says_why_a_memory_was_replaced_its_versions_and_its_conflicts(run: Run) -> None:
    old = ok(run("save", "Production deploys happen on Fridays", "-c", "fact", "--json"))
    old_id = old["memory"]["id"]
    new_id = ok(
        run("save", "On Fridays production deploys happen", "-c", "fact",
            "--supersede-reason", "more precise", "--json")
    )["memory"]["id"]  # fmt: skip
    shown = run("show", short(old_id))  # piped: plain text
    assert shown.exit_code == 0, shown.output
    page = shown.stdout
    assert "\x1b" not in page
    assert page.startswith(f"{old_id}\nProduction deploys happen on Fridays\n")
    assert re.search(r"^status +superseded$", page, re.M)
    assert f"superseded by {short(new_id)}: replaced because the save rule: " in page
    assert "reason given: more precise" in page
    assert re.search(r"^  1  \d{4}-\d\d-\d\d \d\d:\d\d UTC  created$", page, re.M)
    assert re.search(
        rf"^  2  [-\d: ]+UTC  superseded by {short(new_id)} \(more precise\)$", page, re.M
    ), page
    assert f"  {short(new_id)}  active  On Fridays production deploys happen" in page
    assert re.search(rf"^  SUPERSEDES  <-  {short(new_id)}  Memory  On Fridays", page, re.M)
    # --json is the REST API's memory page, whole
    detail = ok(run("show", old_id, "--json"))
    assert set(detail) == MemoryDetail.__required_keys__
    assert detail["superseded_by"] == new_id
    assert [version["change"] for version in detail["versions"]] == [
        "created",
        f"superseded by {new_id} (more precise)",
    ]

    calibrated = {"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.8"}
    said = ok(run("save", "The staging database of the shop listens on port 5432", "-c", "fact",
                  "--source", "explicit", "--json", **calibrated))["memory"]["id"]  # fmt: skip
    guessed = ok(run("save", "The staging database of the shop listens on port 5433", "-c",
                     "fact", "--json", **calibrated))["memory"]["id"]  # fmt: skip
    conflict = run("show", guessed).stdout
    assert re.search(r"^status +active, outranked$", conflict, re.M), conflict
    assert re.search(rf"^conflicts +with {short(said)} \(this one is outranked\)$", conflict, re.M)
    assert re.search(rf"^  CONFLICTS_WITH  [-<>]+  {short(said)}  Memory ", conflict, re.M)


def test_short_ids_name_one_of_your_memories_and_never_another_users(
    run: Run, env: dict[str, str], pool: ConnectionPool
) -> None:
    prefix = uuid.uuid4().hex[:8]
    first, second, theirs = (uuid.UUID(prefix + digit + uuid.uuid4().hex[9:]) for digit in "012")
    stored(pool, env, "The office plant is a ficus", first)
    # unique: forget, restore, archive, reinforce and show take it
    assert run("forget", prefix).stdout == f"deleted {first}\n"
    assert run("restore", prefix).stdout == f"restored {first} (it was deleted)\n"
    assert run("archive", prefix).stdout == f"archived {first}\n"
    reinforced = run("reinforce", prefix, "--evidence", "seen on the desk")
    assert reinforced.stdout.startswith(f"reinforced {first} (restored from the archive)")
    assert run("show", prefix).stdout.startswith(f"{first}\nThe office plant is a ficus\n")
    # another user's memory that begins alike is not found, as a prefix nobody has
    other = {**env, "EMERGENT_MEMORY_ACTOR_ID": str(uuid.uuid4())}
    stored(pool, other, "Someone else's plant is a cactus", theirs)
    for command in (["show"], ["forget"], ["restore"], ["archive"]):
        hidden = run(*command, f"{prefix}2")
        nobody = run(*command, "00000000ff")
        assert (hidden.exit_code, nobody.exit_code) == (1, 1)
        assert hidden.stderr == f"error: memory {prefix}2 not found\n"
        assert nobody.stderr == "error: memory 00000000ff not found\n"
    # two of mine: refused, and nothing changes; one more digit names one
    stored(pool, env, "The office plant needs water on Mondays", second)
    ambiguous = run("forget", prefix)
    assert ambiguous.exit_code == 1
    assert ambiguous.stderr == (
        f"error: MEMORY_ID {prefix} is the beginning of more than one of your memories: give "
        "more of it, or the whole id (--json shows whole ids)\n"
    )
    assert ok(run("list", "--json"))["count"] == 2
    assert run("forget", f"{prefix}1").stdout == f"deleted {second}\n"


def on_terminal(
    env: dict[str, str], *args: str, rows: int = 12, columns: int = 64, **more_env: str
) -> tuple[int, str]:
    """Run the real command on a pseudo-terminal of `rows` x `columns` (stdin and stdout a
    tty), and return its exit status and what the terminal received."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    for variable in ("COLUMNS", "LINES", "NO_COLOR", "PAGER", "LESS"):
        base.pop(variable, None)
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "emergent_memory", *args],
            stdin=secondary,
            stdout=secondary,
            stderr=stderr,
            env=base | {"TERM": "xterm-256color"} | env | more_env,
        )
        os.close(secondary)
        received = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            received += chunk
        os.close(primary)
        status = process.wait(timeout=120)
    return status, received.decode().replace("\r\n", "\n")


def test_tables_are_coloured_cut_and_paged_on_a_terminal_and_plain_when_piped(
    run: Run, env: dict[str, str], pool: ConnectionPool
) -> None:
    long = "The deploy pipeline runs lint, unit tests, integration tests and a canary " * 2
    ids = [stored(pool, env, f"Fact number {n} about the build") for n in range(12)]
    ids.append(stored(pool, env, long.strip()))
    piped = run("list", "--limit", "50")
    assert piped.exit_code == 0, piped.output
    assert "\x1b" not in piped.stdout
    plain_rows = piped.stdout.splitlines()[1:-1]
    assert len(plain_rows) == 13  # one line each, the long one uncut
    assert f"{short(ids[-1])}  fact      now         {long.strip()}" in plain_rows

    # a terminal 12 rows high: 15 lines are paged (a fake pager marks each line it shows),
    # coloured, each row cut to the 64 columns
    status, paged = on_terminal(env, "list", "--limit", "50", PAGER="sed -e s/^/paged:/")
    assert status == 0, paged
    lines = paged.splitlines()
    assert all(line.startswith("paged:") for line in lines), paged
    assert "\x1b[" in paged
    shown = [ANSI.sub("", line.removeprefix("paged:")) for line in lines]
    assert shown[0].split() == ["ID", "CATEGORY", "AGE", "FLAGS", "CONTENT"]
    assert [row.split()[0] for row in shown[1:-1]] == [row.split()[0] for row in plain_rows]
    assert all(len(line) <= 64 for line in shown), shown
    cut = next(line for line in shown if short(ids[-1]) in line)
    assert cut.endswith("…")
    assert cut.index("The deploy") == shown[0].index("CONTENT")

    # --no-pager and NO_COLOR: the same lines, at once, without colour
    status, unpaged = on_terminal(env, "list", "--limit", "50", "--no-pager", NO_COLOR="1",
                                  PAGER="sed -e s/^/paged:/")  # fmt: skip
    assert status == 0, unpaged
    assert unpaged.splitlines() == shown

    # --json on a terminal: the bytes a pipe gets, never coloured nor paged
    status, as_json = on_terminal(env, "list", "--limit", "50", "--json", PAGER="false")
    assert status == 0, as_json
    assert as_json == run("list", "--limit", "50", "--json").stdout


def test_a_list_cuts_a_page_wraps_and_neither_lets_text_reach_the_terminal_raw() -> None:
    wide = Screen(colour=False, width=32, height=None, pager=False)
    rows = [["1", cell("a note\x1b[2J that clears\nthe screen")], ["22", cell("日本語のメモです")]]
    assert wide.table(("N", "TEXT"), rows) == [
        "N   TEXT",
        "1   a note\\x1b[2J that clears ⏎…",  # 32 columns, the escape shown, not sent
        "22  日本語のメモです",  # wide characters take two columns each: 20 of 32
    ]
    assert [len(line) for line in wide.table(None, rows[:1])] == [32]
    page = replace(wide, wraps=True).table(None, rows[:1], [[cell("under it")]])
    assert page == ["1  a note\\x1b[2J that clears ⏎\n   the screen", "   under it"]
    piped = Screen(colour=False, width=None, height=None, pager=False)
    assert piped.table(None, rows[:1]) == ["1  a note\\x1b[2J that clears ⏎ the screen"]


README = Path(__file__).resolve().parent.parent / "README.md"
HEADER = re.compile(r"^\s*(?:[A-Z#]{1,}(?: +|$)){3,}$")  # a table's header: 3 capitalised words


def test_the_readme_session_has_the_headers_and_sections_the_commands_print(run: Run) -> None:
    """The README's session (a real run, pasted) against what the same commands print now:
    the same table headers and the same sections of `show`."""
    session = README.read_text().split("A session, piped")[1].split("```text\n")[1]
    blocks = session.split("```")[0].split("$ emergent-memory ")[1:]
    old = ok(run("save", "Production deploys happen on Fridays", "-c", "fact", "--json"))
    ok(run("save", "On Fridays production deploys happen", "-c", "fact"))  # supersedes it
    ok(run("save", "The staging database listens on port 5432", "-c", "fact"))
    for block in blocks:
        command, printed = block.split("\n", 1)
        args = shlex.split(command)
        if args[0] == "show":  # the README's memory is the one superseded, as here
            args[1] = short(old["memory"]["id"])
        now = run(*args)
        assert now.exit_code == 0, (command, now.output)

        def shape(text: str) -> list[str]:
            return [
                " ".join(line.split())
                for line in text.splitlines()
                if HEADER.match(line) or re.match(r"^[a-z ]+ \((?:oldest|nearest|newest)", line)
            ]

        assert shape(printed), command
        assert shape(now.stdout) == shape(printed), command


def test_another_value_of_the_same_subject_far_apart_is_kept_as_a_conflict(
    run: Run, local_embedder: object
) -> None:
    """The real model puts "Heroku" and "Fly.io" far apart (0.57): with the same subject words
    and one value replaced after them, the second save is still linked as a conflict, and
    recall lists the newer value first and flags the older one."""
    real = {"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "local"}
    old = ok(run("save", "The app is deployed to Heroku.", "-c", "fact", "--json", **real))
    new = ok(run("save", "The app is deployed to Fly.io.", "-c", "fact", "--json", **real))
    assert new["status"] == "created"
    assert new["superseded_ids"] == []
    [close] = new["possible_duplicates"]
    assert (close["id"], close["conflict"]) == (old["memory"]["id"], True)
    recalled = ok(run("recall", "where is the app deployed", "--json", **real))
    order = [m["id"] for m in recalled["memories"]]
    assert order.index(new["memory"]["id"]) < order.index(old["memory"]["id"])
    flags = {m["id"]: m["conflict"] for m in recalled["memories"]}
    assert flags[old["memory"]["id"]] == "outranked"


def test_save_supersedes_a_stated_change_by_the_learned_reading_with_the_local_model(
    run: Run, local_embedder: object
) -> None:
    """With the local model, a chat speaker's stated change that the rules keep beside the old
    turn supersedes it by the learned reading, and `show` says why."""
    real = {"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "local"}
    old = ok(run("save", "Oskar: my shift starts at 7", "-c", "fact", "--json", **real))
    new = ok(run("save", "Oskar: my shift starts at 8 now", "-c", "fact", "--json", **real))
    assert new["superseded_ids"] == [old["memory"]["id"]]
    shown = run("show", short(old["memory"]["id"]), **real)
    assert shown.exit_code == 0, shown.output
    assert (
        f"superseded by {short(new['memory']['id'])}: replaced because the save rule: the same "
        "fact in other words (a model fitted on labelled pairs read them as one)"
    ) in " ".join(shown.stdout.split())


def test_a_correction_of_another_memory_s_number_does_not_supersede_its_nearest_memory(
    run: Run, local_embedder: object
) -> None:
    """Verify set 59's m20 and m26 with the local model: a correction that rejects a number
    ("not 68") the nearest memory never stated corrects another memory, so the nearest stays
    active beside it; one that rejects the nearest memory's own number supersedes it."""
    real = {"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "local"}
    cap_text = "In January 2024 the allocation committee capped ladle orders at 400 kg per week."
    count_text = "Correction: ladle serves 74 partner charities, not 68 - six joined in April."
    cap = ok(run("save", cap_text, "-c", "decision", "--json", **real))
    count = ok(run("save", count_text, "-c", "correction", "--json", **real))
    assert (count["status"], count["superseded_ids"]) == ("created", [])
    listed = {m["id"] for m in ok(run("list", "--json", **real))["memories"]}
    assert listed == {cap["memory"]["id"], count["memory"]["id"]}
    # another user, whose memory states the 68 the correction rejects
    other = {**real, "EMERGENT_MEMORY_ACTOR_ID": str(uuid.uuid4())}
    old = ok(run("save", "Ladle serves 68 partner charities.", "-c", "fact", "--json", **other))
    again = ok(run("save", count_text, "-c", "correction", "--json", **other))
    assert again["superseded_ids"] == [old["memory"]["id"]]


def test_a_change_that_says_only_the_change_supersedes_or_links_the_memory_it_changes(
    run: Run, local_embedder: object
) -> None:
    """With the local model: a change that says nothing but the subject, the change and the
    new value supersedes its nearest memory however far apart the two are in meaning (0.61
    here); when another person's memory is nearer, the memory it changes is linked to it as
    a conflict, the new value first, and the other person's is left alone."""
    real = {"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "local"}
    bea_old = ok(run("save", "Bea's login shell is zsh.", "-c", "fact", "--json", **real))
    bea_new = ok(
        run("save", "Bea switched her login shell to fish.", "-c", "fact", "--json", **real)
    )
    assert bea_new["superseded_ids"] == [bea_old["memory"]["id"]]
    kofi_old = ok(run("save", "Kofi's login shell is bash.", "-c", "fact", "--json", **real))
    kofi_new = ok(
        run("save", "Kofi switched his login shell to fish.", "-c", "fact", "--json", **real)
    )
    assert (kofi_new["status"], kofi_new["superseded_ids"]) == ("created", [])
    old = ok(run("show", kofi_old["memory"]["id"], "--json", **real))
    assert (old["status"], old["conflicts_with"], old["conflict"]) == (
        "active",
        [kofi_new["memory"]["id"]],
        "outranked",
    )
    bea = ok(run("show", bea_new["memory"]["id"], "--json", **real))
    assert (bea["status"], bea["conflicts_with"]) == ("active", [])


def test_verify_confirms_a_restatement_by_the_learned_reading_with_the_local_model(
    run: Run, local_embedder: object
) -> None:
    """With the local model, whose policy has the learned reading, a restatement the rules find
    only related is confirmed and the line says so; with a model nobody calibrated (the test
    embedder) the same claim is not confirmed: that policy has no learned reading."""
    real = {"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "local"}
    content = "Lena answers support tickets at the end of each day, after the last deploy."
    saved = ok(run("save", content, "-c", "fact", "--json", **real))
    claim = (
        "Lena tends to handle support tickets at the close of her day, once the final deploy "
        "is out."
    )
    shown = run("verify", claim, **real)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(
        "confirmed: the closest memory states the claim in other words (learned reading, "
    )
    assert re.search(
        rf"^confirms  0\.\d\d  +{short(saved['memory']['id'])}  fact ", shown.stdout, re.M
    )
    other = ok(run("verify", claim, "--json"))
    assert other["verdict"] != "confirmed"
