"""The memory commands of the CLI, in process, on the test database.

The embedding provider is the OpenAI-compatible one pointed at a loopback server (fast and
deterministic); the local model is exercised by the stdio end-to-end test.
"""

from __future__ import annotations

import json
import re
import shlex
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from emergent_memory.cli import cli
from emergent_memory.db import migrate
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
    assert f"possibly the same fact as {said['memory']['id']}" in inferred.stdout
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
    assert "(current value)" in listed.stdout
    assert "(outranked)" in listed.stdout
