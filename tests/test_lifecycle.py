"""The archive job of the memory lifecycle: which memories it archives (exactly), the dry run,
archive then restore, idempotence, concurrent runs, a writer it never waits for, the role it
needs, its schedule in the worker, and the `lifecycle archive` command.

The tests run in a database of their own, emptied of memories before each one: the job looks
at every actor's memories, so another test's would change its counts. Memories are saved
through MemoryService as the application role (row-level security), then made old with SQL as
the database's owner: their versions, uses and evidence moved into the past.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import pytest
from click.testing import CliRunner, Result
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from emergent_memory import app, graph, telemetry
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.cli import cli
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_role
from emergent_memory.db.pool import DatabasePool, create_pool
from emergent_memory.db.roles import ADMIN_ROLE, ensure_login_role
from emergent_memory.errors import PermissionDenied
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.lifecycle import ArchiveConfig, ArchiveJob, LifecycleService
from emergent_memory.settings import load_settings
from tests.embedders import BagOfWordsEmbedder, EmbeddingServer

APP_ROLE = "emergent_memory_test_lifecycle_app"
ADMIN_LOGIN = "emergent_memory_test_lifecycle_admin"


# -- a database of this module's own ---------------------------------------------------------


@pytest.fixture(scope="module")
def lifecycle_url(make_database: Callable[[], str]) -> str:
    url = make_database()
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="module")
def owner(lifecycle_url: str) -> Iterator[ConnectionPool]:
    """The database's owner (superuser here): sees every row; arranges and inspects."""
    pool = create_pool(lifecycle_url, min_size=1, max_size=4, timeout=20)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def app_url(lifecycle_url: str) -> str:
    password = secrets.token_hex(16)
    ensure_login_role(lifecycle_url, APP_ROLE, password=password)
    return with_role(lifecycle_url, APP_ROLE, password)


@pytest.fixture(scope="module")
def app_pool(app_url: str) -> Iterator[DatabasePool]:
    """The application's pool, a member of emergent_memory_app (row-level security)."""
    pool = create_pool(app_url, min_size=1, max_size=6, timeout=20)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def admin_pool(lifecycle_url: str) -> Iterator[ConnectionPool]:
    """An administrator as docs/security.md sets one up: a login role in
    emergent_memory_admin, not a superuser."""
    password = secrets.token_hex(16)
    ensure_login_role(lifecycle_url, ADMIN_LOGIN, group=ADMIN_ROLE, password=password)
    pool = create_pool(with_role(lifecycle_url, ADMIN_LOGIN, password), min_size=1, max_size=4)
    yield pool
    pool.close()


@pytest.fixture(autouse=True)
def no_memories(owner: ConnectionPool) -> None:
    """Each test sees only the memories it saved."""
    with owner.connection() as conn:
        conn.execute("DELETE FROM kb.memory_evidence")
        conn.execute("DELETE FROM kb.memory_recalls")
        conn.execute("DELETE FROM kb.graph_relationships")
        conn.execute("DELETE FROM kb.graph_embedding_jobs")
        conn.execute("DELETE FROM kb.graph_objects WHERE type = 'Memory'")


@pytest.fixture
def service(app_pool: DatabasePool) -> MemoryService:
    return MemoryService(app_pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.95))


@pytest.fixture
def lifecycle(owner: ConnectionPool) -> LifecycleService:
    return LifecycleService(owner, ArchiveConfig())


def someone(*, admin: bool = False) -> Principal:
    scopes = {READ, WRITE, ADMIN} if admin else {READ, WRITE}
    return Principal(uuid.uuid4(), uuid.uuid4(), frozenset(scopes))


def save(service: MemoryService, principal: Principal, content: str, **options: Any) -> str:
    result = service.save(principal, content, "fact", **options)
    assert result["status"] == "created", result
    return str(result["memory"]["id"])


def age(owner: ConnectionPool, memory_id: str, days: float) -> None:
    """As if everything that happened to the memory happened `days` days earlier: its
    versions, its uses and its evidence."""
    shift = {"id": memory_id, "days": days}
    with owner.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET created_at = created_at - make_interval(days => %(days)s),"
            " updated_at = updated_at - make_interval(days => %(days)s) "
            "WHERE canonical_id = %(id)s",
            shift,
        )
        conn.execute(
            "UPDATE kb.memory_recalls SET recalled_at = recalled_at - make_interval(days => "
            "%(days)s) WHERE canonical_id = %(id)s",
            shift,
        )
        conn.execute(
            "UPDATE kb.memory_evidence SET created_at = created_at - make_interval(days => "
            "%(days)s) WHERE canonical_id = %(id)s",
            shift,
        )


def set_properties(owner: ConnectionPool, memory_id: str, **properties: Any) -> None:
    """Give the memory's head these properties (importance, confidence) in place."""
    with owner.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_objects SET properties = properties || %(patch)s "
            "WHERE canonical_id = %(id)s AND is_head",
            {"id": memory_id, "patch": Jsonb(properties)},
        )


def add_evidence(owner: ConnectionPool, memory_id: str, days_ago: float) -> None:
    """A reinforcement of the memory `days_ago` days ago, as kb.memory_evidence keeps it."""
    with owner.connection() as conn:
        conn.execute(
            "INSERT INTO kb.memory_evidence (canonical_id, actor_id, project_id, evidence, "
            "origin, independent, confidence_before, confidence_after, created_at) "
            "SELECT canonical_id, actor_id, project_id, 'seen again in the CI logs', "
            "'reinforce', true, 0.7, 0.775, now() - make_interval(days => %(days)s) "
            "FROM kb.graph_objects WHERE canonical_id = %(id)s AND is_head",
            {"id": memory_id, "days": days_ago},
        )


def versions(owner: ConnectionPool) -> int:
    with owner.connection() as conn:
        row = conn.execute("SELECT count(*) FROM kb.graph_objects").fetchone()
    assert row is not None
    return int(row[0])


def head(owner: ConnectionPool, memory_id: str) -> dict[str, Any]:
    with owner.connection() as conn:
        row = conn.execute(
            "SELECT version, properties, embedding::text, embedding_model FROM kb.graph_objects "
            "WHERE canonical_id = %s AND is_head",
            (memory_id,),
        ).fetchone()
    assert row is not None
    return {"version": row[0], "properties": row[1], "embedding": row[2], "model": row[3]}


def archived_versions(owner: ConnectionPool, memory_id: str) -> int:
    """Versions of the memory that archived it (archived_at set where the one before had none)."""
    with owner.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM kb.graph_objects o WHERE o.canonical_id = %(id)s "
            "AND o.properties ? 'archived_at' AND NOT EXISTS (SELECT 1 FROM kb.graph_objects p "
            "WHERE p.canonical_id = o.canonical_id AND p.version = o.version - 1 "
            "AND p.properties ? 'archived_at')",
            {"id": memory_id},
        ).fetchone()
    assert row is not None
    return int(row[0])


def recalled_ids(service: MemoryService, principal: Principal, query: str) -> set[str]:
    result = service.recall(principal, query, record_use=False)
    return {memory["id"] for memory in result["memories"]}


# -- which memories ----------------------------------------------------------------------------


def test_candidates_are_exactly_the_idle_unsure_low_or_normal_memories_of_every_actor(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice, bob, admin = someone(), someone(), someone(admin=True)
    expected = {
        "normal": save(service, alice, "The staging cluster runs Kubernetes 1.27"),
        "low": save(service, alice, "The office printer is on the third floor"),
        "bob": save(service, bob, "The nightly build uploads to the eu bucket", scope="project"),
    }
    never = {
        "high": save(service, alice, "Production deploys need two approvals"),
        "core": save(service, alice, "Never force-push to the main branch"),
        "used": save(service, alice, "The wiki moved to Confluence"),
        "reinforced": save(service, alice, "Invoices are generated on the first Monday"),
        "changed": save(service, alice, "The VPN endpoint is vpn.example.org"),
        "confident": save(service, alice, "The database backups are encrypted with age"),
        "young": save(service, alice, "The design review happens on Thursdays"),
        "global": save(
            service, admin, "Company holidays follow the Berlin calendar", scope="global"
        ),
        "deleted": save(service, alice, "The old monitoring stack was Nagios"),
    }
    set_properties(owner, expected["low"], importance="low")
    set_properties(owner, never["high"], importance="high")
    set_properties(owner, never["core"], importance="core")
    set_properties(owner, never["confident"], confidence=1.0)
    service.delete(alice, never["deleted"])
    for name, memory_id in (expected | never).items():
        age(owner, memory_id, 100 if name == "young" else 200)
    # used now, reinforced ten days ago, changed (a new version) now
    assert never["used"] in recalled_ids_recording(service, alice, "wiki Confluence")
    add_evidence(owner, never["reinforced"], days_ago=10)
    service.update(alice, never["changed"], {"content": "The VPN endpoint is vpn2.example.org"})

    report = lifecycle.archive(dry_run=True)

    found = {memory["id"]: memory for memory in report["memories"]}
    assert set(found) == set(expected.values())
    assert report["archived"] == 3
    assert report["by_actor"] == {str(alice.actor_id): 2, str(bob.actor_id): 1}
    normal = found[expected["normal"]]
    assert normal["actor_id"] == str(alice.actor_id)
    assert (normal["category"], normal["importance"], normal["scope"]) == ("fact", "normal", "user")
    assert normal["idle_days"] == 200
    # 0.7 halved every 180 days after 30 days of grace: 0.7 * 0.5 ** (170 / 180)
    assert normal["effective_confidence"] == pytest.approx(0.7 * 0.5 ** (170 / 180), abs=1e-3)
    assert normal["reason"] == "unused for 200 days; confidence 0.36 below 0.50"
    assert "content" not in normal


def recalled_ids_recording(service: MemoryService, principal: Principal, query: str) -> set[str]:
    """A recall that counts as a use of what it returns (as the tool's does)."""
    result = service.recall(principal, query)
    return {memory["id"] for memory in result["memories"]}


def test_the_criteria_are_settings_and_the_idle_time_an_argument(
    service: MemoryService, owner: ConnectionPool
) -> None:
    alice = someone()
    low = save(service, alice, "The coffee machine is descaled on Fridays")
    normal = save(service, alice, "The build cache lives in the ci-cache bucket")
    set_properties(owner, low, importance="low")
    for memory_id in (low, normal):
        age(owner, memory_id, 100)

    def ids(config: ArchiveConfig, **options: Any) -> set[str]:
        report = LifecycleService(owner, config).archive(dry_run=True, **options)
        return {memory["id"] for memory in report["memories"]}

    assert ids(ArchiveConfig()) == set()  # unused for 100 days only
    # at 100 days idle the effective confidence is 0.7 * 0.5 ** (70 / 180) = 0.53
    assert ids(ArchiveConfig(), after_days=90) == set()
    assert ids(ArchiveConfig(below_confidence=0.6), after_days=90) == {low, normal}
    assert ids(ArchiveConfig(after_days=90, below_confidence=0.6, max_importance="low")) == {low}
    assert len(ids(ArchiveConfig(below_confidence=0.6), after_days=90, limit=1)) == 1


# -- what a run does ---------------------------------------------------------------------------


def test_a_dry_run_writes_nothing(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice = someone()
    memory_id = save(service, alice, "The load balancer health check path is /healthz")
    age(owner, memory_id, 365)
    before = versions(owner)
    report = lifecycle.archive(dry_run=True)
    assert report["dry_run"] is True
    assert [memory["id"] for memory in report["memories"]] == [memory_id]
    assert versions(owner) == before
    assert "archived_at" not in head(owner, memory_id)["properties"]
    assert memory_id in recalled_ids(service, alice, "load balancer health check")


def test_a_run_archives_and_restore_brings_the_memory_back_whole(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice = someone()
    memory_id = save(service, alice, "The load balancer health check path is /healthz")
    kept = save(service, alice, "The load balancer terminates TLS with a wildcard certificate")
    age(owner, memory_id, 365)
    before = head(owner, memory_id)
    assert recalled_ids(service, alice, "load balancer") == {memory_id, kept}

    report = lifecycle.archive()

    assert report["dry_run"] is False
    assert [memory["id"] for memory in report["memories"]] == [memory_id]
    after = head(owner, memory_id)
    assert after["version"] == before["version"] + 1
    assert after["properties"]["archive_reason"] == report["memories"][0]["reason"]
    assert after["properties"]["archived_at"] == report["at"]
    assert after["properties"]["content"] == before["properties"]["content"]
    assert (after["embedding"], after["model"]) == (before["embedding"], before["model"])
    assert recalled_ids(service, alice, "load balancer") == {kept}

    restored = service.restore(alice, memory_id)
    assert restored["memory"]["content"] == before["properties"]["content"]
    back = head(owner, memory_id)
    assert "archived_at" not in back["properties"]
    assert "archive_reason" not in back["properties"]
    assert (back["embedding"], back["model"]) == (before["embedding"], before["model"])
    assert recalled_ids(service, alice, "load balancer") == {memory_id, kept}
    # restoring is a new version: the memory is no longer idle
    assert lifecycle.archive()["archived"] == 0


def test_another_run_finds_nothing_more_to_do(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice = someone()
    ids = [save(service, alice, f"Service number {n} listens on port {8000 + n}") for n in range(5)]
    for memory_id in ids:
        age(owner, memory_id, 400)
    assert lifecycle.archive(batch_size=2)["archived"] == 5
    count = versions(owner)
    again = lifecycle.archive(batch_size=2)
    assert (again["archived"], again["busy"], again["changed"]) == (0, 0, 0)
    assert versions(owner) == count
    assert all(archived_versions(owner, memory_id) == 1 for memory_id in ids)


def test_two_runs_at_once_archive_each_memory_once(
    service: MemoryService, owner: ConnectionPool, admin_pool: ConnectionPool
) -> None:
    people = [someone() for _ in range(3)]
    ids = [
        save(service, person, f"Host number {n} of team {t} runs Debian {10 + n}")
        for t, person in enumerate(people)
        for n in range(8)
    ]
    for memory_id in ids:
        age(owner, memory_id, 400)
    runs = [LifecycleService(owner), LifecycleService(admin_pool)]
    start = threading.Barrier(len(runs))
    reports: list[Any] = [None] * len(runs)

    def run(index: int) -> None:
        start.wait()
        reports[index] = runs[index].archive(batch_size=3)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    archived = [memory["id"] for report in reports for memory in report["memories"]]
    assert sorted(archived) == sorted(ids)  # every one, by one run or the other, once
    assert all(archived_versions(owner, memory_id) == 1 for memory_id in ids)


def test_a_memory_a_writer_holds_is_skipped_without_waiting(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice = someone()
    held = save(service, alice, "The release train leaves every second Tuesday")
    free = save(service, alice, "The release notes are written in the CHANGELOG file")
    for memory_id in (held, free):
        age(owner, memory_id, 400)
    # the executor outlives the writer: a run that waited for the lock finishes once it goes
    with ThreadPoolExecutor(1) as executor:
        with owner.connection() as writer, writer.transaction():
            # what every writer of a memory's versions holds until it commits
            writer.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('kb.graph_objects:' || %s, 0))",
                (held,),
            )
            archiving = executor.submit(lifecycle.archive)
            # the run ends while the writer still holds the lock: it did not wait for it (the
            # deadline only keeps a run that waits from hanging the test)
            finished, _ = wait([archiving], timeout=60)
            assert finished, "the archive run waits for the writer's lock"
        report = archiving.result()
    assert [memory["id"] for memory in report["memories"]] == [free]
    assert report["busy"] == 1
    assert lifecycle.archive()["memories"][0]["id"] == held  # the next run takes it


@pytest.mark.parametrize("activity", ["use", "evidence"])
def test_a_memory_used_after_the_candidates_were_read_is_not_archived(
    service: MemoryService,
    owner: ConnectionPool,
    lifecycle: LifecycleService,
    monkeypatch: pytest.MonkeyPatch,
    activity: str,
) -> None:
    """A use (which writes no version) or a reinforcement committed between the candidate
    query and the job's lock: the memory is no longer idle, and is skipped as changed."""
    alice = someone()
    memory_id = save(service, alice, "The build cache lives on the nfs share")
    age(owner, memory_id, 400)
    try_lock = graph.try_lock_object

    def used_first(conn: Any, id_: Any) -> bool:
        if str(id_) == memory_id:
            if activity == "use":
                assert memory_id in {
                    m["id"] for m in service.recall(alice, "build cache nfs share")["memories"]
                }
            else:
                add_evidence(owner, memory_id, 0)
        return try_lock(conn, id_)

    monkeypatch.setattr(graph, "try_lock_object", used_first)
    report = lifecycle.archive()
    assert (report["archived"], report["changed"]) == (0, 1)
    assert "archived_at" not in head(owner, memory_id)["properties"]


def test_the_job_needs_a_role_that_sees_every_actor(
    service: MemoryService,
    owner: ConnectionPool,
    app_pool: ConnectionPool,
    admin_pool: ConnectionPool,
) -> None:
    memory_id = save(service, someone(), "The on-call rota is kept in PagerDuty")
    age(owner, memory_id, 400)
    with pytest.raises(PermissionDenied, match="emergent_memory_admin"):
        LifecycleService(app_pool).archive(dry_run=True)
    report = LifecycleService(admin_pool).archive()
    assert [memory["id"] for memory in report["memories"]] == [memory_id]


def test_each_run_is_measured_with_its_outcome(
    service: MemoryService, owner: ConnectionPool, app_pool: ConnectionPool
) -> None:
    def count(operation: str, outcome: str) -> float:
        sample = telemetry.REGISTRY.get_sample_value(
            "emergent_memory_operations_total",
            {"kind": "lifecycle", "operation": operation, "outcome": outcome},
        )
        return sample or 0.0

    before = (count("archive", "ok"), count("archive_dry_run", "ok"), count("archive", "denied"))
    LifecycleService(owner).archive(dry_run=True)
    LifecycleService(owner).archive()
    with pytest.raises(PermissionDenied):
        LifecycleService(app_pool).archive()
    after = (count("archive", "ok"), count("archive_dry_run", "ok"), count("archive", "denied"))
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1]


# -- in the worker -----------------------------------------------------------------------------


def test_the_worker_runs_the_job_on_its_interval(
    service: MemoryService, owner: ConnectionPool, lifecycle: LifecycleService
) -> None:
    alice = someone()
    first = save(service, alice, "The QA environment is reset every night")
    age(owner, first, 400)
    job = ArchiveJob(lifecycle, interval=0.4, first_delay=0.05)
    with job.running_in_thread() as thread:
        wait_for(lambda: archived_versions(owner, first) == 1)
        second = save(service, alice, "The QA database is a copy of production from Sunday")
        age(owner, second, 400)
        wait_for(lambda: archived_versions(owner, second) == 1)
        # (a run is counted when it ends: on a loaded machine the first run may still be
        # going when the second memory is aged, and archive it too; the job runs again anyway)
        wait_for(lambda: job.runs >= 2)
    assert not thread.is_alive()
    assert archived_versions(owner, first) == 1


def test_a_failing_run_is_logged_and_the_job_goes_on(
    app_pool: ConnectionPool, caplog: pytest.LogCaptureFixture
) -> None:
    job = ArchiveJob(LifecycleService(app_pool), interval=0.1, first_delay=0.01)
    with (
        caplog.at_level(logging.WARNING, "emergent_memory.memory.lifecycle"),
        job.running_in_thread() as thread,
    ):
        wait_for(lambda: job.runs >= 3)
        assert thread.is_alive()
    assert "archive job failed" in caplog.text
    assert "emergent_memory_admin" in caplog.text


def wait_for(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"the condition did not hold within {timeout:g} s"
        time.sleep(0.05)


def test_the_worker_command_runs_the_archive_job(
    lifecycle_url: str,
    service: MemoryService,
    owner: ConnectionPool,
    embedding_server: EmbeddingServer,
) -> None:
    memory_id = save(service, someone(), "The package mirror is apt.internal.example")
    age(owner, memory_id, 400)
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    env = base | {
        "EMERGENT_MEMORY_DATABASE_URL": lifecycle_url,
        "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",  # no model to load
        "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
        "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
        "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
        "EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS": "0.001",  # 3.6 s; the first run sooner
        "EMERGENT_MEMORY_LOG_LEVEL": "INFO",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "emergent_memory", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: archived_versions(owner, memory_id) == 1, timeout=180)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        _, stderr = process.communicate()
    assert "archiving unused memories every 0.001 h" in stderr
    assert "archive job: archived 1 memories of 1 actors" in stderr
    assert "apt.internal" not in stderr  # never content in the log


def archive_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "archive-job"]


def test_the_server_runs_the_job_in_its_worker_thread(
    lifecycle_url: str, service: MemoryService, owner: ConnectionPool
) -> None:
    memory_id = save(service, someone(), "The artifact registry is Harbor")
    age(owner, memory_id, 400)
    settings = load_settings(
        {
            "EMERGENT_MEMORY_DATABASE_URL": lifecycle_url,
            "EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS": "0.001",
        }
    )
    with app.open_memory_service_with_worker(settings, embedder=BagOfWordsEmbedder()):
        assert len(archive_threads()) == 1
        wait_for(lambda: archived_versions(owner, memory_id) == 1)
    assert archive_threads() == []


def test_the_job_is_off_where_the_role_cannot_see_every_actor(
    app_url: str, lifecycle_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    def job_of(environment: dict[str, str]) -> ArchiveJob | None:
        with app._archive_job(load_settings(environment)) as job:
            return job

    with caplog.at_level(logging.INFO, "emergent_memory.app"):
        assert job_of({"EMERGENT_MEMORY_DATABASE_URL": app_url}) is None
    assert "the archive job is off here" in caplog.text
    assert "emergent_memory_admin" in caplog.text
    off = {
        "EMERGENT_MEMORY_DATABASE_URL": lifecycle_url,
        "EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS": "0",
    }
    assert job_of(off) is None
    on = job_of({"EMERGENT_MEMORY_DATABASE_URL": lifecycle_url})
    assert on is not None
    assert (on.interval, on.first_delay) == (24 * 3600, 60)


# -- the command -------------------------------------------------------------------------------


@pytest.fixture
def run(lifecycle_url: str) -> Callable[..., Result]:
    def invoke(*args: str, url: str = lifecycle_url) -> Result:
        return CliRunner().invoke(
            cli, ["lifecycle", "archive", *args], env={"EMERGENT_MEMORY_DATABASE_URL": url}
        )

    return invoke


def test_the_command_reports_a_dry_run_then_archives(
    run: Callable[..., Result], service: MemoryService, owner: ConnectionPool
) -> None:
    alice = someone()
    ids = sorted(
        save(service, alice, text)
        for text in ("The tracing backend is Tempo", "The metrics backend is Mimir")
    )
    for memory_id in ids:
        age(owner, memory_id, 250)
    before = versions(owner)

    dry = run("--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    data = json.loads(dry.stdout)
    assert data["dry_run"] is True
    assert sorted(memory["id"] for memory in data["memories"]) == ids
    assert data["by_actor"] == {str(alice.actor_id): 2}
    assert versions(owner) == before

    text = run("--dry-run")
    assert text.exit_code == 0, text.output
    assert "would archive 2 memories of 1 actors" in text.stdout
    for memory_id in ids:
        assert memory_id in text.stdout
    assert " fact " in text.stdout
    assert " 250d" in text.stdout
    assert "Tempo" not in text.stdout  # ids, never content

    one = run("--limit", "1", "--json")
    assert json.loads(one.stdout)["archived"] == 1
    rest = run()
    assert rest.exit_code == 0, rest.output
    assert "archived 1 memories of 1 actors" in rest.stdout
    assert "nothing to archive" in run().stdout


def test_the_command_takes_the_idle_time(
    run: Callable[..., Result], service: MemoryService, owner: ConnectionPool
) -> None:
    memory_id = save(service, someone(), "The status page is hosted on Statuspage")
    age(owner, memory_id, 150)
    assert json.loads(run("--dry-run", "--json").stdout)["memories"] == []
    found = json.loads(run("--dry-run", "--json", "--after-days", "120").stdout)
    # at 150 days idle the effective confidence is 0.7 * 0.5 ** (120 / 180) = 0.44
    assert [memory["id"] for memory in found["memories"]] == [memory_id]
    assert found["criteria"]["after_days"] == 120
    assert run("--after-days", "0").exit_code == 2


def test_the_command_says_which_role_it_needs(run: Callable[..., Result], app_url: str) -> None:
    result = run("--dry-run", url=app_url)
    assert result.exit_code == 1
    assert "emergent_memory_admin" in result.stderr
    assert "Traceback" not in result.output
