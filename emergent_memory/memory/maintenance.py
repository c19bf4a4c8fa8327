"""Operations on the whole database for an operator, not for a principal: what `status`
shows, export and import, and re-embedding.

The service runs as the role of the pool that the composition root (`app.py`) gives it: the
database's owner, or a member of emergent_memory_admin, which see every row. The edges (CLI)
reach the database for these operations only through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import psycopg
from psycopg_pool import ConnectionPool

from emergent_memory import graph, transfer
from emergent_memory.db.pool import transaction
from emergent_memory.embeddings import jobs
from emergent_memory.graph import GraphSummary


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    """What the graph holds and how many embedding jobs wait (`emergent-memory status`)."""

    graph: GraphSummary
    jobs: dict[str, int]


class MaintenanceService:
    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]]) -> None:
        self._pool = pool

    def status(self) -> DatabaseStatus:
        with transaction(self._pool) as conn:
            return DatabaseStatus(graph=graph.summarize(conn), jobs=jobs.counts(conn))

    def export(
        self, *, project_id: UUID | None = None, actor_id: UUID | None = None
    ) -> Iterator[dict[str, Any]]:
        """The export's records (transfer.export_records), read from one consistent, read-only
        snapshot of every table even while a server writes; the connection is held until the
        iteration ends."""
        with transaction(self._pool) as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield from transfer.export_records(conn, project_id=project_id, actor_id=actor_id)

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> transfer.ImportCounts:
        """Load exported records in one transaction: all of them, or nothing when one is
        refused (transfer.import_records)."""
        with transaction(self._pool) as conn:
            return transfer.import_records(conn, records)
