"""Which database to use (the configured URL or the embedded server); connections to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

from emergent_memory.db.embedded import EmbeddedServer, create_database_if_missing, embedded_server
from emergent_memory.errors import DatabaseUnavailable

EMBEDDED_DATABASE_NAME = "emergent_memory"
APPLICATION_NAME = "emergent-memory"


@dataclass(frozen=True)
class Database:
    """A PostgreSQL database to use: its libpq URL and, when embedded, where its files are and
    the server that runs them."""

    url: str
    server: EmbeddedServer | None = field(default=None, repr=False, compare=False)

    @property
    def embedded(self) -> bool:
        return self.server is not None

    @property
    def pgdata(self) -> Path | None:
        return None if self.server is None else self.server.pgdata


@contextmanager
def open_database(database_url: str | None, data_dir: Path) -> Iterator[Database]:
    """Yield the database to use, starting the embedded server when no URL is configured.

    The embedded server lives in `data_dir/pgdata` and is reused across runs. Processes that
    open the same data directory share one server; it stops when the last of them closes it.
    Openings nest: in one process, only the first starts or joins the server and only the last
    leaves it.
    """
    if database_url:
        yield Database(url=database_url)
        return
    server = embedded_server(data_dir / "pgdata")
    with server.attached():
        create_database_if_missing(server.uri(), EMBEDDED_DATABASE_NAME)
        yield Database(url=server.uri(EMBEDDED_DATABASE_NAME), server=server)


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
