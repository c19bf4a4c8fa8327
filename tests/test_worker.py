"""The embedding worker: a provider that is down or hangs, retries with backoff, the dead
letter, recovery, several workers on one queue, stale locks, and the worker in the server.

The tests run in a database of their own (the queue is shared by everything in a database),
with the application pool connected as a role subject to row-level security, as in
production: the worker must act for each job's owner to read and update its object.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner, Result
from psycopg_pool import ConnectionPool

from emergent_memory import app
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.cli import cli
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_role
from emergent_memory.db.pool import create_pool
from emergent_memory.db.roles import ensure_login_role
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings
from emergent_memory.embeddings.worker import EmbeddingWorker, WorkerConfig
from emergent_memory.errors import SettingsError
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.store import EMBEDDED_TEXT
from emergent_memory.settings import load_settings
from tests.embedders import BagOfWordsEmbedder, DownEmbedder, EmbeddingServer

MODEL = "test-remote"
API_KEY = "sk-worker-test-0123456789"
WORKER_ROLE = "emergent_memory_test_worker"


# -- a database of this module's own ---------------------------------------------------------


@pytest.fixture(scope="module")
def queue_url(make_database: Callable[[], str]) -> str:
    url = make_database()
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="module")
def owner(queue_url: str) -> Iterator[ConnectionPool]:
    """The database owner (superuser here): sees every row, for inspecting and arranging."""
    pool = create_pool(queue_url, min_size=1, max_size=4, timeout=20)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def app_pool(queue_url: str) -> Iterator[ConnectionPool]:
    """The application's pool, as a member of emergent_memory_app (row-level security)."""
    password = secrets.token_hex(16)
    ensure_login_role(queue_url, WORKER_ROLE, password=password)
    pool = create_pool(with_role(queue_url, WORKER_ROLE, password), min_size=1, max_size=8)
    yield pool
    pool.close()


@pytest.fixture(autouse=True)
def empty_queue(owner: ConnectionPool) -> None:
    """Each test sees only the jobs it queued."""
    with owner.connection() as conn:
        conn.execute("DELETE FROM kb.graph_embedding_jobs")


@pytest.fixture
def provider(embedding_server: EmbeddingServer) -> Iterator[OpenAICompatibleEmbeddings]:
    """The OpenAI-compatible provider on the loopback server, without retries."""
    embedder = remote(embedding_server, timeout=10)
    yield embedder
    embedder.close()


def remote(server: EmbeddingServer, timeout: float) -> OpenAICompatibleEmbeddings:
    return OpenAICompatibleEmbeddings(
        base_url=server.base_url,
        model=MODEL,
        dimensions=384,
        api_key=API_KEY,
        timeout=timeout,
        max_retries=0,
    )


@pytest.fixture
def service(app_pool: ConnectionPool, provider: OpenAICompatibleEmbeddings) -> MemoryService:
    return MemoryService(app_pool, provider, MemoryConfig(dedup_threshold=0.95))


def make_worker(
    pool: ConnectionPool, embedder: Any, worker_id: str | None = None, **config: Any
) -> EmbeddingWorker:
    settings = {"backoff_base": 10.0, "backoff_max": 15.0, "max_attempts": 3} | config
    return EmbeddingWorker(
        pool, embedder, WorkerConfig(**settings), embedded_text=EMBEDDED_TEXT, worker_id=worker_id
    )


def me() -> Principal:
    return Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE}))


def jobs_of(owner: ConnectionPool, memory_id: str) -> list[dict[str, Any]]:
    with owner.connection() as conn:
        cursor = conn.execute(
            "SELECT status, attempts, last_error, run_after - now() AS wait, locked_by, "
            "actor_id, scope FROM kb.graph_embedding_jobs WHERE canonical_id = %s "
            "ORDER BY created_at",
            (memory_id,),
        )
        names = [column.name for column in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def job_of(owner: ConnectionPool, memory_id: str) -> dict[str, Any]:
    [job] = jobs_of(owner, memory_id)
    return job


def make_due(owner: ConnectionPool) -> None:
    """What waiting out the backoff would do, without the wait."""
    with owner.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_embedding_jobs SET run_after = now() - interval '1 second' "
            "WHERE status = 'pending'"
        )


def head_model(owner: ConnectionPool, memory_id: str) -> str | None:
    with owner.connection() as conn:
        row = conn.execute(
            "SELECT embedding_model FROM kb.graph_objects WHERE canonical_id = %s AND is_head",
            (memory_id,),
        ).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def hit(result: Any, memory_id: str) -> dict[str, Any]:
    [found] = [m for m in result["memories"] if m["id"] == memory_id]
    return found  # type: ignore[no-any-return]


# -- the provider is down ----------------------------------------------------------------------


def test_with_the_provider_down_a_save_queues_a_job_and_recall_degrades(
    service: MemoryService, embedding_server: EmbeddingServer, owner: ConnectionPool
) -> None:
    embedding_server.down = True
    user = me()
    saved = service.save(user, "The billing cron job runs at midnight UTC", "fact", scope="project")
    assert saved["degraded"] is True
    memory_id = saved["memory"]["id"]
    job = job_of(owner, memory_id)
    assert job["status"] == "pending"
    assert job["attempts"] == 0
    # the job names the object and its owner (whom the worker acts for), never the content
    assert (job["actor_id"], job["scope"]) == (user.actor_id, "project")
    with owner.connection() as conn:
        row = conn.execute(
            "SELECT to_jsonb(j)::text FROM kb.graph_embedding_jobs j WHERE canonical_id = %s",
            (memory_id,),
        ).fetchone()
    assert row is not None
    assert "midnight" not in row[0]

    recalled = service.recall(user, "billing cron")
    assert recalled["degraded"] is True
    assert hit(recalled, memory_id)["scores"]["vector_rank"] is None


def test_while_the_provider_is_down_jobs_back_off_then_are_dead_lettered(
    service: MemoryService,
    provider: OpenAICompatibleEmbeddings,
    embedding_server: EmbeddingServer,
    app_pool: ConnectionPool,
    owner: ConnectionPool,
) -> None:
    embedding_server.down = True
    memory_id = service.save(me(), "Invoices are archived after 90 days", "fact")["memory"]["id"]
    worker = make_worker(app_pool, provider)  # backoff 10 s doubling, at most 15 s, 3 attempts

    counts = worker.run_once()
    assert (counts.claimed, counts.retried, counts.done, counts.dead) == (1, 1, 0, 0)
    job = job_of(owner, memory_id)
    assert (job["status"], job["attempts"], job["locked_by"]) == ("pending", 1, None)
    assert timedelta(seconds=9) < job["wait"] <= timedelta(seconds=11.5)  # 10 s + jitter
    assert "HTTP 503" in job["last_error"]
    assert API_KEY not in job["last_error"]
    assert worker.run_once().claimed == 0  # not due yet

    make_due(owner)
    assert worker.run_once().retried == 1
    job = job_of(owner, memory_id)
    assert (job["status"], job["attempts"]) == ("pending", 2)
    assert timedelta(seconds=14) < job["wait"] <= timedelta(seconds=17)  # 20 s, capped at 15

    make_due(owner)
    assert worker.run_once().dead == 1
    job = job_of(owner, memory_id)
    assert (job["status"], job["attempts"]) == ("dead", 3)
    make_due(owner)
    assert worker.run_once().claimed == 0  # a dead job waits for --retry-dead
    assert head_model(owner, memory_id) is None


def test_once_the_provider_is_back_every_queued_memory_becomes_vector_searchable(
    service: MemoryService,
    provider: OpenAICompatibleEmbeddings,
    embedding_server: EmbeddingServer,
    app_pool: ConnectionPool,
    owner: ConnectionPool,
) -> None:
    user, admin = me(), Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE, ADMIN}))
    embedding_server.down = True
    saved = {
        "user": service.save(user, "The user writes commit messages in English", "preference"),
        "project": service.save(
            user, "The payments service listens on port 7070", "fact", scope="project"
        ),
        "global": service.save(
            admin, "Company style: dates are written as YYYY-MM-DD", "convention", scope="global"
        ),
    }
    assert all(result["degraded"] for result in saved.values())
    ids = {scope: result["memory"]["id"] for scope, result in saved.items()}
    requests = embedding_server.requests
    assert make_worker(app_pool, provider).run_once().retried == 3  # still down
    # the batch, then two texts alone: both fail too, so the provider is down, not a text
    assert embedding_server.requests - requests == 3

    embedding_server.down = False
    make_due(owner)
    counts = make_worker(app_pool, provider).drain()
    assert (counts.claimed, counts.embedded, counts.done) == (3, 3, 3)
    try:
        for scope, memory_id in ids.items():
            job = job_of(owner, memory_id)
            assert (job["status"], job["last_error"], job["locked_by"]) == ("done", None, None)
            assert head_model(owner, memory_id) == MODEL, scope

        for principal, query, memory_id in (
            (user, "commit messages", ids["user"]),
            (user, "payments service port", ids["project"]),
            (user, "how to write dates", ids["global"]),
        ):
            recalled = service.recall(principal, query)
            assert recalled["degraded"] is False
            assert hit(recalled, memory_id)["scores"]["vector_rank"] is not None
    finally:  # global memories are visible to every test's actors
        with owner.connection() as conn:
            conn.execute(
                "UPDATE kb.graph_objects SET deleted_at = now(), delete_reason = 'test cleanup' "
                "WHERE canonical_id = %s AND is_head",
                (ids["global"],),
            )


def test_a_hanging_provider_is_treated_like_one_that_is_down(
    service: MemoryService,
    provider: OpenAICompatibleEmbeddings,
    embedding_server: EmbeddingServer,
    app_pool: ConnectionPool,
    owner: ConnectionPool,
) -> None:
    impatient = remote(embedding_server, timeout=0.5)
    hurried = MemoryService(app_pool, impatient, MemoryConfig(dedup_threshold=0.95))
    # the client gives up after 0.5 s, long before this answer, however loaded the machine
    embedding_server.delay = 60
    user = me()
    saved = hurried.save(user, "The audit log is kept for seven years", "fact")
    assert saved["degraded"] is True
    assert hurried.recall(user, "audit log")["degraded"] is True
    assert make_worker(app_pool, impatient).run_once().retried == 1
    impatient.close()
    job = job_of(owner, saved["memory"]["id"])
    assert job["status"] == "pending"
    assert "timed out after 0.5 s" in job["last_error"]

    embedding_server.delay = 0
    make_due(owner)
    assert make_worker(app_pool, provider).run_once().embedded == 1
    recalled = service.recall(user, "audit log")
    assert hit(recalled, saved["memory"]["id"])["scores"]["vector_rank"] is not None


def test_a_text_the_provider_refuses_does_not_hold_back_the_others(
    service: MemoryService,
    provider: OpenAICompatibleEmbeddings,
    embedding_server: EmbeddingServer,
    app_pool: ConnectionPool,
    owner: ConnectionPool,
) -> None:
    embedding_server.down = True
    user = me()
    ids = [
        service.save(user, text, "fact")["memory"]["id"]
        for text in (
            "The search cluster has three nodes",
            "REJECTED by the provider: this memory cannot be embedded",
            "The CDN caches images for one day",
            "Feature flags live in LaunchDarkly",
        )
    ]
    embedding_server.down = False
    embedding_server.poison = "REJECTED"
    counts = make_worker(app_pool, provider, max_attempts=1).run_once()
    assert (counts.claimed, counts.embedded, counts.dead) == (4, 3, 1)
    assert [job_of(owner, id_)["status"] for id_ in ids] == ["done", "dead", "done", "done"]
    assert "HTTP 400" in job_of(owner, ids[1])["last_error"]


class BrokenEmbedder(BagOfWordsEmbedder):
    """A provider with a bug: an exception that quotes the text, or vectors of a wrong size."""

    def __init__(self, failure: str) -> None:
        super().__init__(MODEL)
        self.failure = failure

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failure == "raises":
            raise RuntimeError(f"cannot embed {texts[0]!r}")
        return [[0.5, 0.5, 0.5] for _ in texts]


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        ("raises", "the embedding provider raised RuntimeError (see the worker's log)"),
        ("wrong size", "storing the vector raised DataException (see the worker's log)"),
    ],
)
def test_a_provider_bug_is_a_failed_attempt_that_never_quotes_the_content(
    failure: str, error: str, app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    memory_id = down.save(me(), "The intranet password hint is the dog's name", "fact")["memory"][
        "id"
    ]
    counts = make_worker(app_pool, BrokenEmbedder(failure)).run_once()
    assert (counts.claimed, counts.retried) == (1, 1)
    job = job_of(owner, memory_id)
    assert (job["status"], job["attempts"], job["last_error"]) == ("pending", 1, error)
    assert head_model(owner, memory_id) is None


def test_url_credentials_never_reach_the_queue() -> None:
    from emergent_memory.embeddings.worker import _describe
    from emergent_memory.errors import EmbeddingUnavailable

    failure = EmbeddingUnavailable(
        "embedding request to https://bob:hunter2@llm.internal/v1/embeddings timed out"
    )
    assert _describe(failure, "the embedding provider") == (
        "embedding request to https://***@llm.internal/v1/embeddings timed out"
    )
    assert len(_describe(EmbeddingUnavailable("x" * 1000), "the embedding provider")) == 300


# -- what a job finds when it runs -------------------------------------------------------------


def test_a_job_embeds_the_head_version_even_when_it_queued_an_older_one(
    app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    user = me()
    first = down.save(user, "Releases are tagged from the main branch", "convention")
    memory_id = first["memory"]["id"]
    # a repeat with a stronger source is a new version (higher confidence) without a job
    again = down.save(user, "Releases are tagged from the main branch", "convention", "explicit")
    assert again["status"] == "unchanged"
    with owner.connection() as conn:
        versions = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (memory_id,)
        ).fetchone()
    assert versions == (2,)
    assert len(jobs_of(owner, memory_id)) == 1

    counts = make_worker(app_pool, BagOfWordsEmbedder()).run_once()
    assert counts.embedded == 1
    assert head_model(owner, memory_id) == "test/bag-of-words"
    with owner.connection() as conn:
        old = conn.execute(
            "SELECT embedding_model FROM kb.graph_objects WHERE canonical_id = %s AND version = 1",
            (memory_id,),
        ).fetchone()
    assert old == (None,)  # history is not rewritten; only the live version is searched


def test_jobs_of_deleted_and_already_embedded_memories_finish_without_embedding(
    app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    user = me()
    deleted = down.save(user, "A fact deleted before it was embedded", "fact")["memory"]["id"]
    down.delete(user, deleted)
    updated = down.save(user, "The office closes at six", "fact")["memory"]["id"]
    # new content while the provider is down: a second job for the new version
    down.update(user, updated, {"content": "The office closes at seven"})
    assert [job["status"] for job in jobs_of(owner, updated)] == ["pending", "pending"]

    embedder = CountingEmbedder()
    counts = make_worker(app_pool, embedder).run_once()
    assert (counts.claimed, counts.embedded, counts.done) == (3, 1, 3)
    assert embedder.texts == ["The office closes at seven"]  # once, for both jobs
    assert job_of(owner, deleted)["last_error"] == "nothing to embed: the object was deleted"
    assert [job["status"] for job in jobs_of(owner, updated)] == ["done", "done"]
    assert head_model(owner, updated) == "test/bag-of-words"


def test_a_job_acts_for_its_owner_only(app_pool: ConnectionPool, owner: ConnectionPool) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    memory_id = down.save(me(), "Somebody's private memory", "fact")["memory"]["id"]
    with owner.connection() as conn:  # a job that claims another owner
        conn.execute(
            "UPDATE kb.graph_embedding_jobs SET actor_id = %s WHERE canonical_id = %s",
            (uuid.uuid4(), memory_id),
        )
    counts = make_worker(app_pool, BagOfWordsEmbedder()).run_once()
    assert counts.dead == 1
    assert "not visible" in job_of(owner, memory_id)["last_error"]
    assert head_model(owner, memory_id) is None


# -- several workers, stopped workers, dead jobs -----------------------------------------------


class CountingEmbedder(BagOfWordsEmbedder):
    """Records every text it embeds (thread-safe), optionally slowly. With `together`, the
    first batch of each thread waits until that many threads embed their first batch at once
    (60 s at most: then it fails)."""

    def __init__(self, delay: float = 0.0, together: int = 0) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.delay = delay
        self._lock = threading.Lock()
        self._together = threading.Barrier(together) if together else None
        self._started: set[int] = set()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            first = threading.get_ident() not in self._started
            self._started.add(threading.get_ident())
        if first and self._together is not None:
            self._together.wait(timeout=60)
        time.sleep(self.delay)
        with self._lock:
            self.texts.extend(texts)
        return super().embed_documents(texts)


def test_several_workers_share_the_queue_and_never_take_a_job_twice(
    app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    user = me()
    texts = [f"Service number {n} is owned by team {n % 7}" for n in range(40)]
    ids = [down.save(user, text, "fact")["memory"]["id"] for text in texts]

    # each worker's first batch waits for the others' first: the three hold jobs at once, so
    # the work is shared however the threads are scheduled (a worker kept from claiming while
    # the others hold their jobs claims none, and the test fails)
    embedder = CountingEmbedder(delay=0.02, together=3)
    workers = [make_worker(app_pool, embedder, batch_size=3) for _ in range(3)]
    start = threading.Barrier(len(workers))
    results: list[Any] = []

    def run(worker: EmbeddingWorker) -> None:
        start.wait()
        results.append(worker.drain())

    threads = [threading.Thread(target=run, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(results) == 3
    assert Counter(embedder.texts) == Counter(texts)  # every text exactly once
    assert sum(counts.embedded for counts in results) == 40
    assert all(counts.claimed > 0 for counts in results)  # the work was shared
    assert {job_of(owner, id_)["status"] for id_ in ids} == {"done"}


def test_the_jobs_of_a_worker_that_stopped_are_reclaimed_after_the_lock_timeout(
    app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    user = me()
    stale, busy, last = (
        down.save(user, text, "fact")["memory"]["id"]
        for text in ("Stale claim", "Claim still held", "Stale claim on its last attempt")
    )
    with owner.connection() as conn:
        for memory_id, held_for, attempts in ((stale, 600, 1), (busy, 5, 1), (last, 600, 3)):
            conn.execute(
                "UPDATE kb.graph_embedding_jobs SET status = 'running', attempts = %s, "
                "locked_by = 'crashed-host:4242:abcdef', "
                "locked_at = now() - make_interval(secs => %s) WHERE canonical_id = %s",
                (attempts, held_for, memory_id),
            )
    counts = make_worker(app_pool, BagOfWordsEmbedder(), lock_timeout=60).run_once()
    assert (counts.reclaimed, counts.claimed, counts.embedded) == (2, 1, 1)
    assert job_of(owner, stale)["status"] == "done"
    assert job_of(owner, stale)["attempts"] == 2
    assert job_of(owner, busy)["status"] == "running"
    dead = job_of(owner, last)
    assert dead["status"] == "dead"
    assert "crashed-host:4242:abcdef" in dead["last_error"]


def test_retry_dead_gives_dead_jobs_new_attempts(
    app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    memory_id = down.save(me(), "The VPN needs the corporate certificate", "fact")["memory"]["id"]
    with owner.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_embedding_jobs SET status = 'dead', attempts = 8, "
            "last_error = 'gave up' WHERE canonical_id = %s",
            (memory_id,),
        )
        # a second, open job for the same version: the dead one must stay dead (one open job
        # per version)
        conn.execute(
            "INSERT INTO kb.graph_embedding_jobs (object_id, canonical_id, project_id, actor_id, "
            "scope, status) SELECT object_id, canonical_id, project_id, actor_id, scope, 'dead' "
            "FROM kb.graph_embedding_jobs WHERE canonical_id = %s",
            (memory_id,),
        )
    worker = make_worker(app_pool, BagOfWordsEmbedder())
    assert worker.retry_dead() == 1  # one per version
    assert worker.queue_counts() == {"pending": 1, "running": 0, "done": 0, "dead": 1}
    assert worker.retry_dead() == 0
    assert worker.run_once().embedded == 1
    assert head_model(owner, memory_id) == "test/bag-of-words"


# -- the real model: found by meaning once the worker ran --------------------------------------


def test_after_the_backfill_a_paraphrase_finds_the_memory_by_meaning(
    app_pool: ConnectionPool, local_embedder: LocalEmbeddings, owner: ConnectionPool
) -> None:
    down = MemoryService(
        app_pool, DownEmbedder(model_name=LOCAL_MODEL_NAME), MemoryConfig(dedup_threshold=0.87)
    )
    up = MemoryService(app_pool, local_embedder, MemoryConfig(dedup_threshold=0.87))
    user = me()
    content = "Deployments to production happen every Thursday afternoon"
    memory_id = down.save(user, content, "fact")["memory"]["id"]
    query = "when do we ship releases?"  # not one word in common
    before = up.recall(user, query)
    assert before["degraded"] is False
    assert memory_id not in [m["id"] for m in before["memories"]]

    assert make_worker(app_pool, local_embedder).run_once().embedded == 1
    after = up.recall(user, query)
    assert after["degraded"] is False
    found = hit(after, memory_id)
    assert found["scores"]["vector_rank"] == 1
    assert found["scores"]["lexical_rank"] is None


# -- the command and the server ----------------------------------------------------------------


@pytest.fixture
def run(queue_url: str, embedding_server: EmbeddingServer) -> Callable[..., Result]:
    env = {
        "EMERGENT_MEMORY_DATABASE_URL": queue_url,
        "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
        "EMERGENT_MEMORY_EMBEDDING_MODEL": MODEL,
        "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
        "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
        "EMERGENT_MEMORY_EMBEDDING_MAX_RETRIES": "0",
        "EMERGENT_MEMORY_ACTOR_ID": str(uuid.uuid4()),
        "EMERGENT_MEMORY_PROJECT_ID": str(uuid.uuid4()),
    }

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), env=env)

    return invoke


def ok(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if result.stdout.startswith("{") else result.stdout


def test_the_worker_command_drains_the_queue_once(
    run: Callable[..., Result], embedding_server: EmbeddingServer, owner: ConnectionPool
) -> None:
    embedding_server.down = True
    saved = ok(run("save", "The wiki moved to Confluence", "-c", "fact", "--json"))
    assert saved["degraded"] is True
    memory_id = saved["memory"]["id"]

    failed = ok(run("worker", "--once", "--json"))
    assert (failed["claimed"], failed["retried"]) == (1, 1)
    assert failed["queue"]["pending"] == 1
    assert "1 waiting, 0 dead" in ok(run("status"))

    embedding_server.down = False
    make_due(owner)
    drained = ok(run("worker", "--once", "--json"))
    assert (drained["claimed"], drained["embedded"]) == (1, 1)
    assert drained["queue"] == {"pending": 0, "running": 0, "done": 1, "dead": 0}
    recalled = ok(run("recall", "wiki Confluence", "--json"))
    assert recalled["degraded"] is False
    assert hit(recalled, memory_id)["scores"]["vector_rank"] == 1
    assert "claimed 0 jobs" in ok(run("worker", "--once"))


def test_the_worker_command_retries_dead_jobs(
    run: Callable[..., Result], embedding_server: EmbeddingServer, owner: ConnectionPool
) -> None:
    embedding_server.down = True
    memory_id = ok(run("save", "Backups are encrypted with age", "-c", "fact", "--json"))["memory"][
        "id"
    ]
    with owner.connection() as conn:
        conn.execute(
            "UPDATE kb.graph_embedding_jobs SET status = 'dead', attempts = 8 "
            "WHERE canonical_id = %s",
            (memory_id,),
        )
    assert "0 waiting, 1 dead (emergent-memory worker --retry-dead)" in ok(run("status"))
    embedding_server.down = False
    assert ok(run("worker", "--once", "--json"))["claimed"] == 0
    revived = ok(run("worker", "--once", "--retry-dead", "--json"))
    assert (revived["revived"], revived["embedded"]) == (1, 1)
    assert job_of(owner, memory_id)["status"] == "done"


def test_the_worker_command_runs_until_sigterm(
    queue_url: str,
    embedding_server: EmbeddingServer,
    app_pool: ConnectionPool,
    owner: ConnectionPool,
) -> None:
    down = MemoryService(app_pool, DownEmbedder(MODEL), MemoryConfig(dedup_threshold=0.95))
    memory_id = down.save(me(), "Logs are shipped to Loki", "fact")["memory"]["id"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    env = base | {
        "EMERGENT_MEMORY_DATABASE_URL": queue_url,
        "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
        "EMERGENT_MEMORY_EMBEDDING_MODEL": MODEL,
        "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
        "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
        "EMERGENT_MEMORY_WORKER_POLL_INTERVAL_SECONDS": "0.1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "emergent_memory", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while job_of(owner, memory_id)["status"] != "done" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert job_of(owner, memory_id)["status"] == "done"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        _, stderr = process.communicate()
    assert "computing queued embeddings" in stderr
    assert "stopping after the current round" in stderr
    assert head_model(owner, memory_id) == MODEL


def worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("embedding-worker")]


def test_the_server_runs_the_worker_in_a_thread_and_stops_it(
    queue_url: str, app_pool: ConnectionPool, owner: ConnectionPool
) -> None:
    down = MemoryService(app_pool, DownEmbedder(), MemoryConfig(dedup_threshold=0.95))
    memory_id = down.save(me(), "The status page is hosted on Statuspage", "fact")["memory"]["id"]
    settings = load_settings(
        {
            "EMERGENT_MEMORY_DATABASE_URL": queue_url,
            "EMERGENT_MEMORY_WORKER_POLL_INTERVAL_SECONDS": "0.05",
        }
    )
    with app.open_memory_service_with_worker(settings, embedder=BagOfWordsEmbedder()) as service:
        assert len(worker_threads()) == 1
        deadline = time.monotonic() + 60  # bounds the test only: the job is done far sooner
        while job_of(owner, memory_id)["status"] != "done" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job_of(owner, memory_id)["status"] == "done"
        assert service.pool is not None
    assert worker_threads() == []
    assert head_model(owner, memory_id) == "test/bag-of-words"


def test_serve_has_a_worker_switch() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    assert "--worker / --no-worker" in result.output


def test_worker_settings_are_checked() -> None:
    settings = load_settings({"EMERGENT_MEMORY_WORKER_BATCH_SIZE": "5"})
    config = app.worker_config(settings)
    assert (config.batch_size, config.max_attempts, config.backoff_max) == (5, 8, 600.0)
    with pytest.raises(SettingsError, match="WORKER_BACKOFF_BASE_SECONDS"):
        load_settings(
            {
                "EMERGENT_MEMORY_WORKER_BACKOFF_BASE_SECONDS": "60",
                "EMERGENT_MEMORY_WORKER_BACKOFF_MAX_SECONDS": "10",
            }
        )
    with pytest.raises(SettingsError, match="WORKER_MAX_ATTEMPTS"):
        load_settings({"EMERGENT_MEMORY_WORKER_MAX_ATTEMPTS": "0"})
    assert WorkerConfig(backoff_base=2, backoff_max=600).backoff(1) == 2
    assert WorkerConfig(backoff_base=2, backoff_max=600).backoff(4) == 16
    assert WorkerConfig(backoff_base=2, backoff_max=600).backoff(20) == 600
