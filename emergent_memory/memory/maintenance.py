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
from pgvector import Vector
from psycopg_pool import ConnectionPool

from emergent_memory import graph, transfer
from emergent_memory.db.pool import transaction
from emergent_memory.embeddings import jobs
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.errors import PermissionDenied
from emergent_memory.graph import GraphSummary
from emergent_memory.memory import store
from emergent_memory.memory.models import ReembedResult


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    """What the graph holds and how many embedding jobs wait (`emergent-memory status`)."""

    graph: GraphSummary
    jobs: dict[str, int]


class MaintenanceService:
    """`embedder`: the configured embedding model, for re-embedding (the other operations
    need none)."""

    def __init__(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        embedder: EmbeddingProvider | None = None,
    ) -> None:
        self._pool = pool
        self._embedder = embedder

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

    def reembed(self, batch_size: int = 64) -> ReembedResult:
        """Give every live memory (and every episode with a summary: store.EMBEDDED_TEXT) a
        vector from the configured model, one batch at a time.

        Run it after switching models (same dimension). Each vector is written through
        graph.set_embedding, as the embedding worker writes it: in place on the live head,
        with its model, only while the memory's text is still the one embedded; the memory's
        pending embedding jobs are closed. Recall only compares vectors of its own model, so
        results stay correct throughout: memories not yet re-embedded are found by full text
        only. Raises EmbeddingUnavailable if the provider fails (what was done is kept).
        """
        if self._embedder is None:
            raise RuntimeError("re-embedding needs the service built with an embedder")
        with transaction(self._pool) as conn:
            if not graph.bypasses_row_security(conn):
                raise PermissionDenied(
                    "re-embedding every memory needs a database role that sees all rows (a "
                    "superuser, BYPASSRLS, or a member of emergent_memory_admin); this one is "
                    "subject to row-level security: see docs/security.md"
                )
        model = self._embedder.model_name
        done = 0
        seen: set[tuple[UUID, str, str]] = set()
        while True:
            with transaction(self._pool) as conn:
                batch = store.needing_embedding(conn, model, batch_size)
            if not batch or all(item in seen for item in batch):
                break  # nothing left, or only memories that could not be updated
            seen.update(batch)
            vectors = self._embedder.embed_documents([text for _, _, text in batch])
            with transaction(self._pool) as conn:
                for (canonical_id, text_property, text), vector in zip(batch, vectors, strict=True):
                    stored = graph.set_embedding(
                        conn,
                        canonical_id,
                        text,
                        Vector(vector),
                        model,
                        text_property=text_property,
                    )
                    if stored:
                        jobs.finish_pending(conn, canonical_id)
            done += len(batch)
        with transaction(self._pool) as conn:
            remaining = store.count_needing_embedding(conn, model)
        return {"model": model, "reembedded": done, "remaining": remaining}
