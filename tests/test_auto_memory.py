"""Claude Code's auto memory imported (`import --from claude-code`): the file format and the
mapping rule, then the whole import on a realistic `~/.claude` tree (several projects, each
type, links, MEMORY.md, a secret, bad files, an edit, a deletion), run again (nothing
changes), as a dry run (nothing written), and by another actor (nothing of the first one's
touched), on the real database through the real command."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result

from emergent_memory.auth.local_ids import derived_project_id, project_root
from emergent_memory.cli import cli
from emergent_memory.hooks.auto_memory_files import origin
from emergent_memory.memory.auto_memory import (
    CORRECTION_TERMS,
    NoteProblem,
    parse_note,
    says_correction,
)
from tests.embedders import EmbeddingServer

Connect = Callable[[], psycopg.Connection[Any]]
ROOT = Path(__file__).resolve().parent.parent

# feedback notes as Claude Code writes them, and what they are: a correction says that
# something was wrong; anything else is a standing instruction
FEEDBACK_CASES = [
    ("Integration tests must hit a real database, not mocks.", False),
    ("Stop summarizing at the end of each answer; the user reads the diff.", False),
    ("Use pnpm instead of npm in this repository.", False),
    ("The deploy script is deploy.sh, not make deploy: I was wrong about that.", True),
    ("Actually the staging database is db-stage-2, the old name is gone.", True),
    ("The user corrected me: the API version is v3.", True),
    ("Mistake to avoid: I mistakenly ran migrations on production once.", True),
    ("The cache is no longer used by the billing service.", True),
    # instructions that use a correction word's neighbours
    ("Tests should have a docstring.", False),
    ("Every public function should have type hints.", False),
    ("Pull requests should have a linked issue and a short description.", False),
    ("Keep commit subjects no longer than 72 characters.", False),
    ("Use git switch instead of git checkout for branches.", False),
    ("Check that the tests actually ran before saying they pass.", False),
    ("Files should not have trailing whitespace.", False),
    ("Error messages should say what to fix.", False),
    ("Always ask before running database migrations.", False),
    ("Write commit subjects in the imperative mood.", False),
    ("Prefer the standard library over new dependencies.", False),
    ("Never commit directly to main; open a pull request.", False),
    ("Run only the touched test files locally; CI runs the whole suite.", False),
    ("When a test fails, explain why before changing it.", False),
    # corrections
    ("I should have been running the linter before each commit.", True),
    ("Those tests should not have been skipped: the user wants every one of them run.", True),
    ("I should not have force-pushed to the shared branch.", True),
    ("I was wrong to assume the repository uses npm; it uses pnpm.", True),
    ("The user corrected the release date: it is June 3, not May 30.", True),
    ("Correction: the staging database moved to db-stage-3.", True),
    ("It is not true that the cache is shared between tenants.", True),
    ("The docs I followed were incorrect: the flag is --dry-run, not --dryrun.", True),
    ("I misread the config: the timeout is in seconds, not milliseconds.", True),
    ("My summary was mistaken about who owns payments: it is the core team.", True),
    ("I wrongly assumed the tests run in parallel; they run one after another.", True),
    ("The benchmark numbers I reported were erroneous: the cache was warm.", True),
    ("I misunderstood the request: the user wanted a draft, not a merged change.", True),
    ("The old build script is no longer used; run make instead.", True),
    ("Tests pass. Actually, the flaky one was skipped, so check the log.", True),
    ("The migration should have been reversible; it was not.", True),
    ("I shouldn’t have deleted the lock file without asking.", True),
    ("The keys shouldn't have been committed; rotate them.", True),
    ("Functions shouldn't have side effects at import time.", False),
]


@pytest.mark.parametrize(("text", "correction"), FEEDBACK_CASES)
def test_a_feedback_note_is_a_correction_when_it_says_something_was_wrong(
    text: str, correction: bool
) -> None:
    assert says_correction(text) is correction
    note = parse_note("f.md", f"---\nname: f\nmetadata:\n  type: feedback\n---\n{text}\n")
    assert note.category == ("correction" if correction else "instruction")


def test_the_docs_list_exactly_the_correction_words_the_rule_uses() -> None:
    row = next(
        line
        for line in (ROOT / "docs" / "clients.md").read_text().splitlines()
        if line.startswith("| `feedback` |")
    )
    listed = {
        key: tuple(term.strip() for term in found.split(","))
        for key, found in zip(
            CORRECTION_TERMS,
            re.findall(r"\*([^*]+)\*", row),
            strict=True,
        )
    }
    assert listed == CORRECTION_TERMS


def test_the_frontmatter_forms_claude_code_writes() -> None:
    nested = parse_note(
        "deploy.md",
        "---\nname: deploy-steps\ndescription: >\n  How releases\n  go out\nmetadata:\n"
        "  type: project\n---\nTag, then run [[ci-pipeline]] and [[notes|the notes]].\n",
    )
    assert (nested.name, nested.type, nested.scope, nested.category) == (
        "deploy-steps",
        "project",
        "project",
        "fact",
    )
    # the body, as written; the description (a folded block) is read but not prepended
    assert nested.text == "Tag, then run [[ci-pipeline]] and [[notes|the notes]]."
    assert nested.description.split() == ["How", "releases", "go", "out"]
    assert nested.links == ["ci-pipeline", "notes"]
    label_only = parse_note("l.md", "---\ndescription: The user works in UTC\n---\n\n")
    assert label_only.text == "The user works in UTC"  # no body: the description
    top = parse_note("u.md", '---\nname: "role"\ntype: user\ndescription: a role\n---\nA role\n')
    assert (top.type, top.category, top.scope, top.text) == ("user", "preference", "user", "A role")
    bare = parse_note("plain.md", "Just a fact with no frontmatter.")
    assert (bare.type, bare.category, bare.scope) == ("reference", "fact", "user")
    with pytest.raises(NoteProblem, match="unknown type"):
        parse_note("x.md", "---\nmetadata:\n  type: diary\n---\nbody\n")
    with pytest.raises(NoteProblem, match="not a memory file"):
        parse_note("MEMORY.md", "- [x](x.md)\n")


# -- the import on a realistic tree ----------------------------------------------------------------

SECRET = "ghp_" + "Zq3Rv8Lm2Tx6Wb9Kp4Yd7Hc1Nf5Gs0Aj3Ue8"


def note(kind: str, name: str, body: str, description: str = "") -> str:
    return (
        f"---\nname: {name}\ndescription: {description or name}\nmetadata:\n  type: {kind}\n"
        f"---\n{body}\n"
    )


def claude_tree(home: Path) -> dict[str, Path]:
    """~/.claude with two projects: `shop` (transcripts record its directory) and `api` (no
    transcript)."""
    projects = home / ".claude" / "projects"
    shop_dir = home / "src" / "shop"
    shop_dir.mkdir(parents=True)
    shop = projects / "-home-dev-src-shop"
    (shop / "memory").mkdir(parents=True)
    transcript = [
        {"type": "summary", "summary": "no cwd here"},
        {"type": "user", "cwd": str(shop_dir), "sessionId": "s1", "message": {"content": "hi"}},
    ]
    (shop / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in transcript))
    memory = shop / "memory"
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) the user's role\n")
    (memory / "user_role.md").write_text(
        note("user", "user_role", "The user is a data engineer who writes Go daily.")
    )
    (memory / "feedback_mocks.md").write_text(
        note("feedback", "feedback_mocks", "Integration tests hit a real database, not mocks.")
    )
    (memory / "project_freeze.md").write_text(
        note("project", "project_freeze", "Merge freeze for the mobile release from March 5.")
    )
    (memory / "reference_tracker.md").write_text(
        "---\nname: reference_tracker\ntype: reference\n---\n"
        "Shop bugs are tracked in the Linear project SHOP; see [[project_freeze]].\n"
    )
    (memory / "token.md").write_text(note("reference", "token", f"The CI token is {SECRET}"))
    (memory / "latin1.md").write_bytes("---\ntype: user\n---\nCaf\xe9 au lait\n".encode("latin-1"))
    (memory / "diary.md").write_text(note("diary", "diary", "Dear diary"))
    api = projects / "-home-dev-src-api"
    (api / "memory").mkdir(parents=True)
    (api / "memory" / "project_owner.md").write_text(
        note("project", "project_owner", "The api service is owned by the platform team.")
    )
    (api / "memory" / "user_editor.md").write_text(
        note("user", "user_editor", "The user edits code in Helix, with vim keys.")
    )
    return {"home": home, "shop_dir": shop_dir, "shop": shop, "api": api}


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    return claude_tree(tmp_path)


@pytest.fixture
def run_import(
    embedding_server: EmbeddingServer, database_url: str, tree: dict[str, Path]
) -> Callable[..., Result]:
    actor = str(uuid.uuid4())

    def invoke(*args: str, actor_id: str = actor) -> Result:
        env = {
            "EMERGENT_MEMORY_DATABASE_URL": database_url,
            "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
            "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
            "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
            "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
            "EMERGENT_MEMORY_ACTOR_ID": actor_id,
            "EMERGENT_MEMORY_PROJECT_ID": None,
            "CLAUDE_CONFIG_DIR": str(tree["home"] / ".claude"),
        }
        return CliRunner().invoke(cli, ["import", "--from", "claude-code", *args], env=env)

    invoke.actor = actor  # type: ignore[attr-defined]
    return invoke


def outcomes(result: Result) -> dict[str, dict[str, Any]]:
    """file -> its outcome, over every folder, from the command's --json."""
    assert result.exit_code == 0, result.output
    return {
        f"{report['folder']}/{item['file']}": item
        for report in json.loads(result.stdout)
        for item in report["files"]
    }


def statuses(result: Result) -> dict[str, str]:
    return {name: item["status"] for name, item in outcomes(result).items()}


def memory_rows(connect: Connect, actor: str) -> list[dict[str, Any]]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT canonical_id, version, project_id, scope, deleted_at, properties "
            "FROM kb.graph_objects WHERE actor_id = %s AND type = 'Memory' AND is_head "
            "ORDER BY created_at",
            (actor,),
        ).fetchall()
    keys = ("id", "version", "project_id", "scope", "deleted_at", "properties")
    return [dict(zip(keys, row, strict=True)) for row in rows]


SHOP = "-home-dev-src-shop"
API = "-home-dev-src-api"
FIRST_IMPORT = {
    f"{SHOP}/user_role.md": "saved",
    f"{SHOP}/feedback_mocks.md": "saved",
    f"{SHOP}/project_freeze.md": "saved",
    f"{SHOP}/reference_tracker.md": "saved",
    f"{SHOP}/token.md": "skipped",
    f"{SHOP}/latin1.md": "skipped",
    f"{SHOP}/diary.md": "skipped",
    f"{API}/project_owner.md": "skipped",
    f"{API}/user_editor.md": "saved",
}


def test_a_dry_run_says_what_the_import_does_and_writes_nothing(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path]
) -> None:
    dry = run_import("--dry-run", "--json")
    assert statuses(dry) == FIRST_IMPORT
    assert memory_rows(connect, run_import.actor) == []  # type: ignore[attr-defined]
    assert statuses(run_import("--json")) == FIRST_IMPORT
    # the same note in another project's folder: the save would find it remembered already
    role = (tree["shop"] / "memory" / "user_role.md").read_text()
    (tree["api"] / "memory" / "user_copy.md").write_text(role)
    copy = outcomes(run_import("--dry-run", "--json", str(tree["api"])))[f"{API}/user_copy.md"]
    assert copy["status"] == "unchanged"
    assert copy["reason"] == "the same text is remembered already"
    real = outcomes(run_import("--json", str(tree["api"])))[f"{API}/user_copy.md"]
    assert real == copy


def test_the_import_maps_each_file_and_a_second_run_changes_nothing(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path]
) -> None:
    actor = run_import.actor  # type: ignore[attr-defined]
    first = outcomes(run_import("--json"))
    assert {name: item["status"] for name, item in first.items()} == FIRST_IMPORT
    reasons = {name: item.get("reason", "") for name, item in first.items()}
    assert "GitHub token" in reasons[f"{SHOP}/token.md"]
    assert SECRET not in json.dumps(first)
    assert reasons[f"{SHOP}/latin1.md"] == "not UTF-8 text"
    assert "unknown type" in reasons[f"{SHOP}/diary.md"]
    assert "project is unknown" in reasons[f"{API}/project_owner.md"]
    kinds = {name: (item.get("category"), item.get("scope")) for name, item in first.items()}
    assert kinds[f"{SHOP}/user_role.md"] == ("preference", "user")
    assert kinds[f"{SHOP}/feedback_mocks.md"] == ("instruction", "user")
    assert kinds[f"{SHOP}/project_freeze.md"] == ("fact", "project")
    assert kinds[f"{SHOP}/reference_tracker.md"] == ("fact", "user")

    rows = {str(row["id"]): row for row in memory_rows(connect, actor)}
    assert len(rows) == 5
    freeze = rows[first[f"{SHOP}/project_freeze.md"]["memory_id"]]
    # the project the stdio server and the hooks derive for a session in that directory
    assert freeze["project_id"] == derived_project_id(project_root(tree["shop_dir"]))
    assert freeze["properties"]["source"] == "explicit"
    assert freeze["properties"]["imported_from"] == [
        {
            "client": "claude-code",
            "origin": origin(tree["shop"]),
            "folder": SHOP,
            "file": "project_freeze.md",
            "sha256": freeze["properties"]["imported_from"][0]["sha256"],
        }
    ]
    tracker = first[f"{SHOP}/reference_tracker.md"]["memory_id"]
    with connect() as conn:
        edge = conn.execute(
            "SELECT count(*) FROM kb.graph_relationships WHERE type = 'RELEVANT_TO' "
            "AND src_id = %s AND dst_id = %s AND is_head AND deleted_at IS NULL",
            (tracker, freeze["id"]),
        ).fetchone()
    assert edge == (1,)

    again = run_import("--json")
    expected_again = {
        name: "unchanged" if status == "saved" else status for name, status in FIRST_IMPORT.items()
    }
    assert statuses(again) == expected_again
    after = memory_rows(connect, actor)
    assert [(str(row["id"]), row["version"]) for row in after] == [
        (id_, rows[id_]["version"]) for id_ in rows
    ]


def test_an_edited_file_is_a_new_version_and_a_deleted_one_is_forgotten(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path]
) -> None:
    actor = run_import.actor  # type: ignore[attr-defined]
    first = outcomes(run_import("--json"))
    memory = tree["shop"] / "memory"
    (memory / "user_role.md").write_text(
        note("user", "user_role", "The user is a data engineer who now writes Rust daily.")
    )
    (memory / "feedback_mocks.md").unlink()
    second = outcomes(run_import("--json", str(tree["shop"])))
    role = second[f"{SHOP}/user_role.md"]
    assert role["status"] == "updated"
    assert role["memory_id"] == first[f"{SHOP}/user_role.md"]["memory_id"]
    gone = second[f"{SHOP}/feedback_mocks.md"]
    assert gone["status"] == "forgotten"
    rows = {str(row["id"]): row for row in memory_rows(connect, actor)}
    assert rows[role["memory_id"]]["version"] == 2
    assert "Rust" in rows[role["memory_id"]]["properties"]["content"]
    assert rows[gone["memory_id"]]["deleted_at"] is not None  # soft: restorable
    assert len(rows) == 5  # no new memory


def test_another_actor_imports_its_own_and_touches_nothing_of_the_first(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path]
) -> None:
    first_actor = run_import.actor  # type: ignore[attr-defined]
    run_import("--json")
    before = memory_rows(connect, first_actor)
    (tree["shop"] / "memory" / "user_role.md").unlink()
    other = str(uuid.uuid4())
    theirs = statuses(run_import("--json", actor_id=other))
    assert theirs[f"{SHOP}/feedback_mocks.md"] == "saved"  # not the first actor's memory
    assert f"{SHOP}/user_role.md" not in theirs  # nothing to forget: it was never theirs
    assert memory_rows(connect, first_actor) == before
    assert len(memory_rows(connect, other)) == 4


def test_wrong_combinations_are_refused_with_what_to_do(
    run_import: Callable[..., Result], tree: dict[str, Path], tmp_path: Path
) -> None:
    refused = run_import(str(tmp_path / "nowhere"))
    assert refused.exit_code == 1
    assert "neither a Claude Code memory folder" in refused.output
    alone = run_import("--project-dir", str(tree["shop_dir"]))
    assert alone.exit_code == 1
    assert "--project-dir needs DIR" in alone.output
    export = CliRunner().invoke(cli, ["import", "--dry-run", str(tmp_path / "x.jsonl")])
    assert export.exit_code == 1
    assert "go with --from claude-code only" in export.output
    folder = CliRunner().invoke(cli, ["import", str(tree["shop"])])
    assert folder.exit_code == 1
    assert "add --from claude-code" in folder.output


def test_a_project_dir_given_imports_the_project_typed_files(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path], tmp_path: Path
) -> None:
    api_dir = tmp_path / "src" / "api"
    api_dir.mkdir(parents=True)
    result = outcomes(run_import("--json", str(tree["api"]), "--project-dir", str(api_dir)))
    owner = result[f"{API}/project_owner.md"]
    assert owner["status"] == "saved"
    rows = {str(row["id"]): row for row in memory_rows(connect, run_import.actor)}  # type: ignore[attr-defined]
    assert rows[owner["memory_id"]]["project_id"] == derived_project_id(project_root(api_dir))


def test_human_output_names_each_file(run_import: Callable[..., Result]) -> None:
    shown = run_import("--dry-run")
    assert shown.exit_code == 0, shown.output
    assert "saved     user_role.md" in shown.output
    assert "not UTF-8 text" in shown.output
    assert "dry run: nothing was written" in shown.output
    assert SECRET not in shown.output


def test_replace_auto_memory_turns_it_off_once_a_folder_is_imported_whole(
    run_import: Callable[..., Result], tree: dict[str, Path]
) -> None:
    for bad in ("token.md", "latin1.md", "diary.md"):
        (tree["shop"] / "memory" / bad).unlink()
    local = tree["shop_dir"] / ".claude" / "settings.local.json"
    local.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]}, "autoMemoryEnabled": True}
    local.write_text(json.dumps(mine))

    dry = run_import("--dry-run", "--replace-auto-memory", "--json", str(tree["shop"]))
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)[0]["auto_memory"]["turned_off"] is False
    assert json.loads(local.read_text()) == mine  # a dry run writes nothing

    done = run_import("--replace-auto-memory", "--json")
    assert done.exit_code == 0, done.output
    reports = {report["folder"]: report for report in json.loads(done.stdout)}
    shop, api = reports[SHOP], reports[API]
    assert shop["auto_memory"]["turned_off"] is True
    assert json.loads(local.read_text()) == mine | {"autoMemoryEnabled": False}
    assert json.loads(Path(shop["auto_memory"]["backup"]).read_text()) == mine
    # api's project file was skipped (its project is unknown): its auto memory stays on
    assert api["auto_memory"]["turned_off"] is False
    assert "unknown" in api["auto_memory"]["note"]

    export = CliRunner().invoke(cli, ["import", "--replace-auto-memory", "x.jsonl"])
    assert export.exit_code == 1
    assert "go with --from claude-code only" in export.output


def test_replace_auto_memory_leaves_it_on_when_a_file_was_skipped(
    run_import: Callable[..., Result], tree: dict[str, Path]
) -> None:
    shown = run_import("--replace-auto-memory", str(tree["shop"]))
    assert shown.exit_code == 0, shown.output
    assert "left on: 3 file(s) skipped; fix them and import again" in shown.output
    assert not (tree["shop_dir"] / ".claude").exists()


def test_a_folder_of_the_same_name_elsewhere_forgets_nothing_of_this_one(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path], tmp_path: Path
) -> None:
    """The same project folder name under another config dir (as on another machine) is
    another folder: importing it whole forgets none of the first one's files, and the same
    note in both is one memory, held by both keys until both files are gone."""
    actor = run_import.actor  # type: ignore[attr-defined]
    first = outcomes(run_import("--json", str(tree["shop"])))
    elsewhere = tmp_path / "other" / ".claude" / "projects" / SHOP
    (elsewhere / "memory").mkdir(parents=True)
    role = (tree["shop"] / "memory" / "user_role.md").read_text()
    (elsewhere / "memory" / "user_role.md").write_text(role)
    (elsewhere / "memory" / "feedback_mocks.md").write_text(
        note("feedback", "feedback_mocks", "Mock nothing but the clock.")
    )
    second = outcomes(run_import("--json", str(elsewhere)))
    assert {name: item["status"] for name, item in second.items()} == {
        f"{SHOP}/user_role.md": "unchanged",  # the same text: the same memory
        f"{SHOP}/feedback_mocks.md": "saved",  # another file than the first folder's
    }
    rows = {str(row["id"]): row for row in memory_rows(connect, actor)}
    mocks = rows[first[f"{SHOP}/feedback_mocks.md"]["memory_id"]]
    assert mocks["deleted_at"] is None
    assert mocks["properties"]["content"] == "Integration tests hit a real database, not mocks."
    shared = rows[first[f"{SHOP}/user_role.md"]["memory_id"]]
    origins = {item["origin"] for item in shared["properties"]["imported_from"]}
    assert origins == {origin(tree["shop"]), origin(elsewhere)}
    assert len(origins) == 2

    (elsewhere / "memory" / "user_role.md").unlink()
    gone = outcomes(run_import("--json", str(elsewhere)))[f"{SHOP}/user_role.md"]
    assert gone["status"] == "forgotten"
    assert gone["reason"] == "another file still holds its memory: kept"
    assert {str(row["id"]): row for row in memory_rows(connect, actor)}[gone["memory_id"]][
        "deleted_at"
    ] is None
    again = statuses(run_import("--json", str(tree["shop"])))
    assert again[f"{SHOP}/user_role.md"] == again[f"{SHOP}/feedback_mocks.md"] == "unchanged"


def test_symbolic_links_in_a_memory_folder_are_not_followed(
    run_import: Callable[..., Result], connect: Connect, tree: dict[str, Path], tmp_path: Path
) -> None:
    secret = tmp_path / "netrc"
    secret.write_text("machine example.com login me password hunter2-secret\n")
    (tree["shop"] / "memory" / "netrc.md").symlink_to(secret)
    away = tmp_path / "away"
    away.mkdir()
    (away / "user_pet.md").write_text(note("user", "user_pet", "The user has a cat."))
    linked = tree["home"] / ".claude" / "projects" / "-home-dev-src-linked"
    linked.mkdir()
    (linked / "memory").symlink_to(away, target_is_directory=True)
    result = run_import("--json")
    found = outcomes(result)
    assert found[f"{SHOP}/netrc.md"] == {
        "file": "netrc.md",
        "status": "skipped",
        "reason": "a symbolic link",
    }
    assert found["-home-dev-src-linked/user_pet.md"]["reason"] == "a symbolic link"
    assert "hunter2" not in result.output
    contents = [row["properties"]["content"] for row in memory_rows(connect, run_import.actor)]  # type: ignore[attr-defined]
    assert not any("hunter2" in text or "cat" in text for text in contents)


@pytest.mark.parametrize("given", [".", "memory", "./memory/../memory"])
def test_a_relative_dir_is_the_folder_it_names(
    run_import: Callable[..., Result],
    tree: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    given: str,
) -> None:
    monkeypatch.chdir(tree["shop"])
    result = run_import("--dry-run", "--json", given)
    assert result.exit_code == 0, result.output
    [report] = json.loads(result.stdout)
    assert (report["folder"], report["origin"]) == (SHOP, origin(tree["shop"]))
    assert report["counts"]["saved"] == 4


def test_replace_auto_memory_says_when_it_creates_the_settings_file(
    run_import: Callable[..., Result], tree: dict[str, Path]
) -> None:
    for bad in ("token.md", "latin1.md", "diary.md"):
        (tree["shop"] / "memory" / bad).unlink()
    done = run_import("--replace-auto-memory", "--json", str(tree["shop"]))
    assert done.exit_code == 0, done.output
    [report] = json.loads(done.stdout)
    local = tree["shop_dir"] / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {"autoMemoryEnabled": False}
    assert report["auto_memory"]["note"] == (
        f"turned off in {local} (a new file: add .claude/settings.local.json to .gitignore)"
    )
