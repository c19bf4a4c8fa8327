"""Alembic environment for emergent-memory: runs the raw-DDL revisions on one connection.

The database URL comes, in order, from `config.attributes["database_url"]` (set by
`emergent_memory.db.migrate`, which the CLI and the tests use), or from the application
settings (EMERGENT_MEMORY_DATABASE_URL, else the embedded server in EMERGENT_MEMORY_DATA_DIR)
when the plain `alembic` command is run from the repository root.
"""

from __future__ import annotations

from contextlib import ExitStack

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool, text

from emergent_memory.db.migrate import MIGRATION_LOCK_KEY, VERSION_TABLE

config = context.config


def _database_url(stack: ExitStack) -> str:
    url = config.attributes.get("database_url")
    if url:
        return str(url)
    from emergent_memory.db.connection import open_database
    from emergent_memory.settings import load_settings

    settings = load_settings()
    return stack.enter_context(open_database(settings.database_url, settings.data_dir)).url


def run_migrations_online() -> None:
    with ExitStack() as stack:
        url = _database_url(stack)
        # psycopg builds the connection from the libpq URL as given (unix sockets in
        # `?host=`, passwords, sslmode...); SQLAlchemy only wraps it for Alembic.
        engine = create_engine(
            "postgresql+psycopg://",
            creator=lambda: psycopg.connect(url),
            poolclass=pool.NullPool,
        )
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                version_table=VERSION_TABLE,
                transactional_ddl=True,
            )
            with context.begin_transaction():
                # one migrator at a time; the version table is read after the lock is held
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                )
                context.run_migrations()
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit(
        "emergent-memory migrations run against a database; offline SQL generation (--sql) "
        "is not supported."
    )
run_migrations_online()
