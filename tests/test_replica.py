"""Reads on a read replica: a second embedded PostgreSQL, a real streaming standby of a primary
made for these tests (pg_basebackup -R), behind EMERGENT_MEMORY_READ_DATABASE_URL."""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import psycopg
import psycopg.sql
import pytest
from starlette.testclient import TestClient

from emergent_memory import app
from emergent_memory.app import ServerServices
from emergent_memory.auth.principal import Principal
from emergent_memory.db import migrate
from emergent_memory.db.connection import with_role
from emergent_memory.db.embedded import (
    EmbeddedServer,
    create_database_if_missing,
    embedded_server,
    postgres_bin_dir,
)
from emergent_memory.db.pool import HEALTH_INTERVAL
from emergent_memory.db.replica import LAG_CHECK_INTERVAL, ReplicaPool, serves_reads
from emergent_memory.db.roles import EMBEDDED_SERVER_ROLE, ensure_login_role
from emergent_memory.errors import MemoryNotFound, SettingsError
from emergent_memory.mcp.server import create_server
from emergent_memory.memory.service import acting_for
from emergent_memory.settings import Settings, load_settings
from tests.embedders import EmbeddingServer
from tests.helpers import wait_until

DATABASE = "emergent_memory"
# The server's login role on both: a member of emergent_memory_app (row-level security
# applies), trusted on the embedded servers' unix sockets.
APP_ROLE = "emergent_memory_replica_test"


@dataclass(frozen=True)
class Cluster:
    """A primary and its streaming replica, each an embedded server with its own socket."""

    primary: EmbeddedServer
    replica: EmbeddedServer

    @property
    def owner_url(self) -> str:
        return self.primary.uri(DATABASE)

    @property
    def replica_owner_url(self) -> str:
        return self.replica.uri(DATABASE)

    def replayed(self) -> None:
        """Wait until the replica has replayed everything the primary wrote so far."""
        with psycopg.connect(self.owner_url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
            assert row is not None
        with psycopg.connect(self.replica_owner_url, autocommit=True) as replica:

            def caught_up() -> bool:
                done = replica.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)
                ).fetchone()
                return bool(done and done[0])

            wait_until(caught_up, timeout=10, what="the replica replayed the primary's WAL")

    @contextmanager
    def replay_paused(self) -> Iterator[None]:
        """The replica receives the primary's WAL but applies none of it meanwhile."""
        with psycopg.connect(self.replica_owner_url, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

            def paused() -> bool:
                state = conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()
                return state == ("paused",)

            wait_until(paused, timeout=10, what="the replica's replay paused")
            try:
                yield
            finally:
                conn.execute("SELECT pg_wal_replay_resume()")


def _base_backup(primary: EmbeddedServer, target: Path) -> None:
    """pg_basebackup -R of the primary into `target` (as the servers' system user when root),
    without the primary's socket lock and log, which live in its data directory."""
    target.mkdir(mode=0o700)
    user = primary.system_user
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(target, entry.pw_uid, entry.pw_gid)
    socket_dir = primary.uri().partition("host=")[2]
    subprocess.run(
        [
            str(postgres_bin_dir() / "pg_basebackup"),
            "--dbname",
            f"host={socket_dir} user=postgres",
            "--pgdata",
            str(target),
            "--write-recovery-conf",
            "--wal-method=stream",
            "--checkpoint=fast",
        ],
        user=user,
        check=True,
        capture_output=True,
        timeout=60,
    )
    for leftover in [*target.glob(".s.PGSQL.*"), target / "log"]:
        leftover.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A migrated primary (its own embedded server: the session's shared test server is left
    alone) with the application role, and a streaming replica of it."""
    # short: the sockets live in it
    root = Path(tempfile.mkdtemp(prefix="emr-", dir="/tmp"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        # where the embedded server of EMERGENT_MEMORY_DATA_DIR=root is
        primary = stack.enter_context(embedded_server(root / "pgdata").attached())
        create_database_if_missing(primary.uri(), DATABASE)
        migrate.upgrade(primary.uri(DATABASE))
        ensure_login_role(primary.uri(DATABASE), APP_ROLE)
        _base_backup(primary, root / "r")
        replica = stack.enter_context(embedded_server(root / "r").attached())
        yield Cluster(primary, replica)


def settings_for(cluster: Cluster, embedding_server: EmbeddingServer, **more: str) -> Settings:
    return load_settings(
        {
            "EMERGENT_MEMORY_DATABASE_URL": with_role(cluster.owner_url, APP_ROLE),
            "EMERGENT_MEMORY_READ_DATABASE_URL": with_role(cluster.replica_owner_url, APP_ROLE),
            "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
            "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
            "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
            "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
            "EMERGENT_MEMORY_POOL_MIN_SIZE": "1",
            "EMERGENT_MEMORY_POOL_MAX_SIZE": "2",
            **more,
        }
    )


@contextmanager
def server_services(settings: Settings) -> Iterator[tuple[ServerServices, ReplicaPool]]:
    """The composition root's services (as `serve` opens them) and their read pool."""
    with app.open_server_services(settings, load_model="lazily") as services:
        read_pool = services.memory.read_pool
        assert isinstance(read_pool, ReplicaPool)
        yield services, read_pool


def me() -> Principal:
    return Principal(actor_id=uuid.uuid4(), project_id=uuid.uuid4())


def found(services: ServerServices, principal: Principal, query: str) -> list[str]:
    return [hit["content"] for hit in services.memory.recall(principal, query)["memories"]]


@contextmanager
def http_client(services: ServerServices) -> Iterator[TestClient]:
    """A client of the MCP server's HTTP app (its /health) on these services."""
    server = create_server(lambda: nullcontext(services.memory), lambda: me())
    with TestClient(server.http_app()) as client:
        yield client


def on_replica(read_pool: ReplicaPool, principal: Principal) -> bool:
    """Whether a read transaction of the read pool runs on a standby (pg_is_in_recovery)."""
    with acting_for(read_pool, principal) as conn:
        row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        return bool(row and row[0])


def test_reads_are_served_by_the_replica_and_writes_by_the_primary(
    cluster: Cluster, embedding_server: EmbeddingServer
) -> None:
    settings = settings_for(cluster, embedding_server, EMERGENT_MEMORY_READ_MAX_LAG_SECONDS="3600")
    with server_services(settings) as (services, read_pool):
        user = me()
        assert on_replica(read_pool, user)
        first = services.memory.save(user, "The billing service deploys on Tuesdays", "fact")
        assert first["status"] == "created"
        cluster.replayed()
        assert found(services, user, "billing service deploys") == [
            "The billing service deploys on Tuesdays"
        ]
        with cluster.replay_paused():
            # written on the primary (a standby refuses writes), not yet replayed: the
            # replica's reads cannot see it, which is how a read shows where it ran
            second = services.memory.save(user, "The ledger service deploys on Fridays", "fact")
            assert second["status"] == "created"
            second_id = second["memory"]["id"]
            with psycopg.connect(cluster.owner_url) as primary:
                row = primary.execute(
                    "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (second_id,)
                ).fetchone()
                assert row is not None
                assert row[0] > 0
            assert found(services, user, "ledger service deploys Fridays") == [
                "The billing service deploys on Tuesdays"
            ]
            with pytest.raises(MemoryNotFound):
                services.browse.get(user, second_id)
            listed = services.browse.list(user)["memories"]
            assert [m["id"] for m in listed] == [first["memory"]["id"]]
            assert services.browse.stats(user)["total"] == 1
            assert services.memory.list_memories(user)["count"] == 1
        cluster.replayed()
        assert found(services, user, "ledger service deploys Fridays")[0] == (
            "The ledger service deploys on Fridays"
        )
        assert services.browse.get(user, second_id)["id"] == second_id
        assert read_pool.reads_on_primary == 0
        assert read_pool.reads_on_replica >= 7
        # recall recorded its uses on the primary (a standby cannot)
        with psycopg.connect(cluster.owner_url) as primary:
            row = primary.execute(
                "SELECT count(*) FROM kb.memory_recalls WHERE canonical_id = %s", (second_id,)
            ).fetchone()
            assert row == (1,)


def test_row_level_security_isolates_actors_on_the_replica(
    cluster: Cluster, embedding_server: EmbeddingServer
) -> None:
    with server_services(settings_for(cluster, embedding_server)) as (services, read_pool):
        alice, bob = me(), me()
        saved = services.memory.save(alice, "Alice's deploy key lives in the vault", "fact")
        memory_id = saved["memory"]["id"]
        cluster.replayed()
        with acting_for(read_pool, bob) as conn:
            row = conn.execute(
                "SELECT pg_is_in_recovery(), current_user, "
                "(SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s)",
                (memory_id,),
            ).fetchone()
            assert row == (True, APP_ROLE, 0)
        assert found(services, bob, "deploy key vault") == []
        assert services.browse.list(bob)["memories"] == []
        with pytest.raises(MemoryNotFound):
            services.browse.get(bob, memory_id)
        assert found(services, alice, "deploy key vault") == [
            "Alice's deploy key lives in the vault"
        ]
        assert [m["id"] for m in services.browse.list(alice)["memories"]] == [memory_id]
        assert read_pool.reads_on_primary == 0


def test_a_lagging_replica_sends_reads_to_the_primary(
    cluster: Cluster, embedding_server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(cluster, embedding_server, EMERGENT_MEMORY_READ_MAX_LAG_SECONDS="0.5")
    caplog.set_level(logging.WARNING, logger="emergent_memory.db.replica")
    with server_services(settings) as (services, read_pool):
        user = me()
        services.memory.save(user, "The search cluster has three nodes", "fact")
        cluster.replayed()
        assert found(services, user, "search cluster nodes")
        assert read_pool.reads_on_primary == 0
        with cluster.replay_paused():
            services.memory.save(user, "The queue cluster has five nodes", "fact")
            # the replica falls behind by more than half a second, and a lag measure is due
            time.sleep(LAG_CHECK_INTERVAL + 0.6)
            assert "The queue cluster has five nodes" in found(services, user, "queue cluster")
            assert read_pool.reads_on_primary == 1
            assert read_pool.health()["status"] == "lagging"
            assert "behind the primary" in caplog.text
        cluster.replayed()
        time.sleep(LAG_CHECK_INTERVAL)
        on_replica_before = read_pool.reads_on_replica
        assert "The queue cluster has five nodes" in found(services, user, "queue cluster")
        assert read_pool.reads_on_replica == on_replica_before + 1
        assert read_pool.health()["status"] == "ok"
        assert "caught up" in caplog.text


def test_a_replica_serves_reads_only_streaming_and_within_the_lag() -> None:
    assert serves_reads(0.0, True, 5.0)
    assert not serves_reads(0.0, False, 5.0)  # cut off: it has replayed all it received
    assert not serves_reads(7.2, True, 5.0)


def test_a_replica_cut_off_from_the_primary_sends_reads_to_the_primary(
    cluster: Cluster, embedding_server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Its WAL receiver stopped (no primary_conninfo): its replay lag reads 0, yet it no
    longer follows the primary, so reads go to the primary until it streams again."""
    settings = settings_for(cluster, embedding_server, EMERGENT_MEMORY_READ_MAX_LAG_SECONDS="3600")
    caplog.set_level(logging.WARNING, logger="emergent_memory.db.replica")
    with (
        server_services(settings) as (_services, read_pool),
        psycopg.connect(cluster.replica_owner_url, autocommit=True) as replica,
    ):
        user = me()
        cluster.replayed()
        assert on_replica(read_pool, user)  # the app role sees its receiver: it streams
        row = replica.execute("SHOW primary_conninfo").fetchone()
        assert row is not None
        conninfo = row[0]
        assert conninfo

        def receivers() -> int:
            found = replica.execute("SELECT count(*) FROM pg_stat_wal_receiver").fetchone()
            return int(found[0]) if found else 0

        replica.execute("ALTER SYSTEM SET primary_conninfo = ''")
        replica.execute("SELECT pg_reload_conf()")
        try:
            wait_until(lambda: receivers() == 0, timeout=10, what="the WAL receiver stopped")
            time.sleep(LAG_CHECK_INTERVAL)
            before = read_pool.reads_on_primary
            assert not on_replica(read_pool, user)
            assert read_pool.reads_on_primary == before + 1
            assert read_pool.health()["status"] == "lagging"
            assert "not streaming from the primary" in caplog.text
        finally:
            replica.execute(
                psycopg.sql.SQL("ALTER SYSTEM SET primary_conninfo = {}").format(conninfo)
            )
            replica.execute("SELECT pg_reload_conf()")
        wait_until(lambda: receivers() == 1, timeout=30, what="the WAL receiver streams again")
        cluster.replayed()
        time.sleep(LAG_CHECK_INTERVAL)
        assert on_replica(read_pool, user)
        assert read_pool.health()["status"] == "ok"


def test_a_replica_that_is_down_sends_reads_to_the_primary(
    cluster: Cluster, embedding_server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="emergent_memory.db.replica")
    with (
        server_services(settings_for(cluster, embedding_server)) as (services, read_pool),
        http_client(services) as http,
    ):
        user = me()
        saved = services.memory.save(user, "The cache cluster runs Redis 7", "fact")
        cluster.replayed()
        assert on_replica(read_pool, user)
        health = http.get("/health")
        assert health.status_code == 200
        assert health.json() == {
            "status": "ok",
            "read_replica": {"status": "ok", "lag_seconds": 0.0},
        }
        cluster.replica.stop()
        try:
            # recall, the list and the dashboard's reads go on, on the primary
            assert found(services, user, "cache cluster Redis") == [
                "The cache cluster runs Redis 7"
            ]
            assert services.browse.get(user, saved["memory"]["id"])["id"] == saved["memory"]["id"]
            assert services.browse.stats(user)["total"] == 1
            assert services.memory.list_memories(user)["count"] == 1
            assert not on_replica(read_pool, user)
            assert read_pool.reads_on_primary >= 4
            assert "the read replica is unavailable" in caplog.text
            time.sleep(HEALTH_INTERVAL)
            # /health says so, and stays 200: reads are served
            health = http.get("/health")
            assert health.status_code == 200
            assert health.json() == {
                "status": "ok",
                "read_replica": {"status": "unavailable", "lag_seconds": None},
            }
            # a server that starts while the replica is down serves, on the primary
            with server_services(settings_for(cluster, embedding_server)) as (later, later_pool):
                assert found(later, user, "cache cluster Redis") == [
                    "The cache cluster runs Redis 7"
                ]
                assert later_pool.reads_on_primary == 1
                assert later_pool.reads_on_replica == 0
            # the primary's connections it lent went back writable: saves go on
            assert services.memory.save(user, "The cache is warmed at boot", "fact")
            assert services.memory.save(user, "The cache evicts by LRU", "fact")
            # every read transaction is read-only, on the primary too
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):  # noqa: SIM117
                with acting_for(read_pool, user) as conn:
                    conn.execute("CREATE TEMPORARY TABLE written (x int)")
        finally:
            cluster.replica.restart_if_stopped()
        time.sleep(HEALTH_INTERVAL)
        # the health check finds it back, and reads go to it again
        assert http.get("/health").json()["read_replica"]["status"] == "ok"
        assert "reachable again" in caplog.text
        assert on_replica(read_pool, user)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):  # noqa: SIM117
            with acting_for(read_pool, user) as conn:
                conn.execute("CREATE TEMPORARY TABLE written (x int)")


def test_the_read_database_url_is_checked_like_the_database_url() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings({"EMERGENT_MEMORY_READ_DATABASE_URL": "mysql://reader:s3cret@db/memory"})
    message = str(raised.value)
    assert "EMERGENT_MEMORY_READ_DATABASE_URL: must be a URL starting with postgresql://" in (
        message
    )
    assert "s3cret" not in message
    assert load_settings({}).read_database_url is None


def test_with_the_embedded_server_the_replica_is_read_as_the_application_role(
    cluster: Cluster, embedding_server: EmbeddingServer
) -> None:
    """No database URL: the primary is the embedded server of the data directory, and the read
    URL (its superuser's, as a replica of it gives) is used as the server's login role."""
    ensure_login_role(cluster.owner_url, EMBEDDED_SERVER_ROLE)
    cluster.replayed()  # the role reached the replica
    settings = load_settings(
        {
            "EMERGENT_MEMORY_DATA_DIR": str(cluster.primary.pgdata.parent),
            "EMERGENT_MEMORY_READ_DATABASE_URL": cluster.replica_owner_url,
            "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
            "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
            "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
            "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
        }
    )
    with app.open_memory_service(settings, load_model="lazily") as memory:
        assert memory.read_pool is not None
        with acting_for(memory.read_pool, me()) as conn:
            row = conn.execute("SELECT pg_is_in_recovery(), current_user").fetchone()
        assert row == (True, EMBEDDED_SERVER_ROLE)


def test_the_monitoring_queries_of_the_docs_run(cluster: Cluster) -> None:
    """docs/operations.md's two queries: the primary's view of its standby, the standby's own."""
    docs = (Path(__file__).parent.parent / "docs" / "operations.md").read_text()
    section = docs.split("### Read replica", 1)[1].split("\n## ", 1)[0]
    on_primary, on_the_replica = [
        block.split("```", 1)[0] for block in section.split("```sql\n")[1:]
    ]
    with psycopg.connect(cluster.owner_url) as conn:
        standbys = conn.execute(on_primary.encode()).fetchall()
    assert len(standbys) == 1
    assert standbys[0][1] == "streaming"
    cluster.replayed()
    with psycopg.connect(cluster.replica_owner_url) as conn:
        row = conn.execute(on_the_replica.encode()).fetchone()
    assert row is not None
    assert row[0] is True
