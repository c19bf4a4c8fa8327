"""What the benchmarks share: a database of their own, the real local model, an embedding
cache on disk, and result files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from emergent_memory.db import migrate
from emergent_memory.db.connection import open_database, with_database_name
from emergent_memory.embeddings.local import LocalEmbeddings

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
# Results go to benchmarks/results unless BENCH_RESULTS_DIR says otherwise (the smoke test).
RESULTS = Path(os.environ.get("BENCH_RESULTS_DIR", ROOT / "results"))
CACHE = ROOT / ".cache"
# The revision before recall's rare-word full-text branch (0008): its downgrade gives a
# baseline measured in the same run.
BEFORE_RARE_WORDS = "0007_vectors_in_row"
# kb.recall_memories with the arguments every revision from 0006 takes (none of 0013's
# lifecycle arguments): what the baselines measured through an older revision's downgrade
# call, since the product's statement (store.RECALL) names arguments they lack.
RECALL_BEFORE_LIFECYCLE = """
SELECT r.id FROM kb.recall_memories(
    p_actor_id => %(actor_id)s, p_project_id => %(project_id)s, p_query => %(query)s,
    p_query_embedding => %(embedding)s, p_embedding_model => %(model)s,
    p_category => %(category)s, p_scope => %(scope)s, p_limit => %(limit)s,
    p_candidates => %(candidates)s, p_rrf_k => %(rrf_k)s,
    p_lexical_weight => %(lexical_weight)s, p_vector_weight => %(vector_weight)s,
    p_confidence_weight => %(confidence_weight)s, p_min_similarity => %(min_similarity)s
) AS r
"""
FUSION = (
    "candidates",
    "rrf_k",
    "lexical_weight",
    "vector_weight",
    "confidence_weight",
    "min_similarity",
)


def recall_before_lifecycle(
    conn: psycopg.Connection[Any],
    actor_id: Any,
    project_id: Any,
    tuning: dict[str, Any],
    **arguments: Any,
) -> list[Any]:
    """The ids kb.recall_memories returns, called as before migration 0013 (`arguments`:
    query, embedding, model, category, scope, limit; `tuning`: the fusion's, of which the
    lifecycle's weights are left out)."""
    params = {name: tuning[name] for name in FUSION} | arguments
    params |= {"actor_id": actor_id, "project_id": project_id}
    return [row[0] for row in conn.execute(RECALL_BEFORE_LIFECYCLE, params)]


@contextmanager
def bench_database() -> Iterator[str]:
    """A fresh, migrated database: on BENCH_DATABASE_URL's server if set
    (the URL of a database whose role may create databases), else on an embedded server in
    a temporary directory. Dropped at the end."""
    configured = os.environ.get("BENCH_DATABASE_URL")
    with _server(configured) as admin_url:
        name = f"bench_{int(time.time())}_{os.getpid()}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        url = with_database_name(admin_url, name)
        try:
            migrate.upgrade(url)
            yield url
        finally:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


@contextmanager
def _server(configured: str | None) -> Iterator[str]:
    if configured:
        yield configured
        return
    data_dir = Path(tempfile.mkdtemp(prefix="emb-", dir="/tmp"))
    try:
        with open_database(None, data_dir) as db:
            yield db.url
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


class CachedEmbeddings:
    """The local model, with every vector it computed kept on disk (keyed by text), so runs
    after the first skip the model for texts they have seen."""

    def __init__(self, model: LocalEmbeddings | None = None) -> None:
        self.model = model or LocalEmbeddings()
        CACHE.mkdir(exist_ok=True)
        self._path = CACHE / "embeddings-all-MiniLM-L6-v2.npz"
        self._cache, older = _read_cache(self._path)
        self._dirty = older  # a file in the older layout is written anew at the next save

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def dimensions(self) -> int:
        return self.model.dimensions

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [vector.tolist() for vector in self.vectors(texts, "d")]

    def embed_query(self, text: str) -> list[float]:
        return self.vectors([text], "q")[0].tolist()

    def vectors(self, texts: Sequence[str], kind: str = "d") -> list[np.ndarray]:
        keys = [kind + hashlib.sha1(t.encode(), usedforsecurity=False).hexdigest() for t in texts]
        missing = [i for i, key in enumerate(keys) if key not in self._cache]
        if missing:
            computed = self.model.embed_documents([texts[i] for i in missing])
            for i, vector in zip(missing, computed, strict=True):
                self._cache[keys[i]] = np.asarray(vector, dtype=np.float32)
            self._dirty = True
        return [self._cache[key] for key in keys]

    def save(self) -> None:
        """Merge with what is on disk (another run may have added vectors) and replace the
        file atomically."""
        if not self._dirty:
            return
        for key, vector in _read_cache(self._path)[0].items():
            self._cache.setdefault(key, vector)
        partial = self._path.with_suffix(f".{os.getpid()}.tmp.npz")
        # two arrays, not one per text: reading 14,000 members of a zip took 4 s a run
        keys = np.array(list(self._cache))
        np.savez(partial, keys=keys, vectors=np.stack([self._cache[key] for key in keys]))
        os.replace(partial, self._path)
        self._dirty = False


def _read_cache(path: Path) -> tuple[dict[str, np.ndarray], bool]:
    """The cached vectors by key ({} without a file), and whether the file has the older
    layout (one member per text), which is read too."""
    if not path.exists():
        return {}, False
    with np.load(path) as stored:
        if {"keys", "vectors"} <= set(stored.files):
            return dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True)), False
        return {key: stored[key] for key in stored.files}, True


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)

    return {
        "n": len(ordered),
        "p50": at(0.50),
        "p95": at(0.95),
        "p99": at(0.99),
        "mean": round(statistics.fmean(ordered), 3),
    }


def timed(call: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def write_result(name: str, result: dict[str, Any], markdown: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown.rstrip() + "\n")
