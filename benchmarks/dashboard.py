"""The dashboard and the REST API at 100,000 memories: server time of the list, search and
memory pages, and the weight of the dashboard's first load, against baselines measured in
the same run.

One actor owns 100,000 memories (three projects, user and project scope, a year of history:
edited versions, supersessions, deletions, contexts, memories derived from captured
conversations, and a recall log for use counts); a second actor owns 10,000 more, a third
100 global ones, so every page filters by visibility. They are loaded with COPY (the rows the
service writes, vectors from the on-disk cache; the HNSW index rebuilt after the load, as
benchmarks/latency.py does).

The server is `emergent-memory serve --transport http`, run in this process (the command
itself, so the app is built exactly as the command builds it) as the application role, so
row-level security applies. Its ASGI app is wrapped in a timer: "server time" is from the
request's arrival in the app to its last body byte. Requests go over a loopback socket,
one at a time. Baselines in the same run: /health (the floor of any request), and the
service calls underneath (MemoryService.list_memories and recall, in process).
"""

from __future__ import annotations

import gzip
import html.parser
import os
import random
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote_plus, urljoin, urlsplit

import httpx
import psycopg
from pgvector import Vector
from psycopg import Connection
from psycopg.types.json import Jsonb

from benchmarks import generate
from benchmarks.common import (
    CachedEmbeddings,
    bench_database,
    percentiles,
    timed,
    write_result,
)
from benchmarks.latency import HNSW, app_role_url, free_port
from emergent_memory import graph
from emergent_memory.auth import tokens
from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.models import CONFIDENCE_BY_SOURCE

NAMESPACE = uuid.UUID("5b1f8a3e-7c2d-4e6f-9a0b-1c2d3e4f5a6b")
ME, OTHER, ADMIN = "me", "other", "admin"
TARGETS_MS = {"list": 100, "search": 100, "memory": 50}
PAGE_WEIGHT_TARGET_BYTES = 200 * 1000
DAY = timedelta(days=1)
CONTEXT_NAMES = [
    f"{service} {topic}"
    for service in generate.SERVICES[:10]
    for topic in ("rollout", "on-call", "migration", "reviews")
]


@dataclass(frozen=True)
class Size:
    memories: int  # the first actor's
    other: int  # the second actor's
    global_: int  # global memories (an administrator's)
    episodes: int
    deep_from: int  # the deep pages timed: this one and the next DEEP_PAGES - 1


SIZES = {
    "smoke": Size(memories=600, other=60, global_=10, episodes=5, deep_from=2),
    "full": Size(memories=100_000, other=10_000, global_=100, episodes=300, deep_from=20),
}


def actor_id(name: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"actor:{name}")


def project_id(name: str, project: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"project:{name}:{project}")


# -- seeding ---------------------------------------------------------------------------------

COPY_OBJECTS = (
    "COPY kb.graph_objects (canonical_id, version, is_head, project_id, actor_id, scope, type, "
    "properties, labels, embedding, embedding_model, deleted_at, delete_reason, created_at, "
    "updated_at) FROM STDIN"
)
COPY_EDGES = (
    "COPY kb.graph_relationships (canonical_id, version, project_id, actor_id, type, src_id, "
    "dst_id, created_at, updated_at) FROM STDIN"
)
COPY_RECALLS = "COPY kb.memory_recalls (canonical_id, actor_id, project_id, recalled_at) FROM STDIN"


@dataclass
class Seeded:
    """What was loaded, and the ids the measurements pick from."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    # the first actor's memories by kind, for the memory page
    edited: list[uuid.UUID] = field(default_factory=list)
    superseded: list[uuid.UUID] = field(default_factory=list)
    superseding: list[uuid.UUID] = field(default_factory=list)
    deleted: list[uuid.UUID] = field(default_factory=list)
    in_context: list[uuid.UUID] = field(default_factory=list)
    derived: list[uuid.UUID] = field(default_factory=list)
    plain: list[uuid.UUID] = field(default_factory=list)
    others: list[uuid.UUID] = field(default_factory=list)  # the second actor's


class _Writer:
    """Rows for the three COPYs, built in memory first (the load is one transaction)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.objects: list[tuple[Any, ...]] = []
        self.edges: list[tuple[Any, ...]] = []
        self.recalls: list[tuple[Any, ...]] = []

    def memory_version(
        self,
        canonical: uuid.UUID,
        version: int,
        head: bool,
        owner: uuid.UUID,
        project: uuid.UUID,
        row: generate.Synthetic,
        content: str,
        vector: Vector,
        created: datetime,
        updated: datetime,
        *,
        superseded_by: uuid.UUID | None = None,
        deleted: bool = False,
    ) -> None:
        properties: dict[str, Any] = {
            "content": content,
            "category": row.category,
            "source": "inferred",
            "scope": row.scope,
            "confidence": CONFIDENCE_BY_SOURCE["inferred"],
        }
        if superseded_by is not None:
            properties["superseded_by"] = str(superseded_by)
        self.objects.append(
            (
                canonical,
                version,
                head,
                project,
                owner,
                row.scope,
                "Memory",
                Jsonb(properties),
                ["memory", row.category, row.scope],
                vector,
                self.model,
                updated if deleted else None,
                "deleted by its owner" if deleted else None,
                created,
                updated,
            )
        )

    def edge(
        self,
        kind: str,
        owner: uuid.UUID,
        project: uuid.UUID,
        src: uuid.UUID,
        dst: uuid.UUID,
        when: datetime,
    ) -> None:
        self.edges.append((uuid.uuid4(), 1, project, owner, kind, src, dst, when, when))


Embed = Callable[[list[str]], list[Vector]]


def seed(conn: Connection[Any], size: Size, embed: Embed, model_name: str) -> Seeded:
    """Load every actor's rows in one transaction (as the database's owner), then rebuild the
    HNSW index and analyze."""
    rng = random.Random(16)
    now = datetime.now(UTC)
    seeded = Seeded()
    # the latency benchmark's texts: their vectors are in the cache after one run of it
    rows = list(generate.memories(size.memories, actors=1))
    vectors = embed([r.content for r in rows])
    writer = _Writer(model_name)
    start = time.perf_counter()

    me = actor_id(ME)
    ids = [uuid.uuid4() for _ in rows]
    # a year and a bit of history, oldest first
    span = timedelta(days=400)
    created = [
        now - span + span * (i / len(rows)) + timedelta(minutes=rng.randint(0, 50))
        for i in range(len(rows))
    ]
    projects = [project_id(ME, row.project) for row in rows]
    superseded_by: dict[int, int] = {}
    for i in range(len(rows)):
        # a later memory of the same kind replaced it (the service's supersession)
        if i % 23 == 5 and i + 7 < len(rows):
            superseded_by[i] = i + 7
    for i, row in enumerate(rows):
        canonical, vector, when = ids[i], vectors[i], created[i]
        if i in superseded_by:
            newer = superseded_by[i]
            writer.memory_version(
                canonical, 1, False, me, projects[i], row, row.content, vector, when, when
            )
            writer.memory_version(
                canonical,
                2,
                True,
                me,
                projects[i],
                row,
                row.content,
                vector,
                when,
                created[newer],
                superseded_by=ids[newer],
            )
            writer.edge("SUPERSEDES", me, projects[newer], ids[newer], canonical, created[newer])
            seeded.superseded.append(canonical)
            seeded.superseding.append(ids[newer])
        elif i % 41 == 7:
            gone = min(now, when + DAY * rng.randint(1, 60))
            writer.memory_version(
                canonical, 1, False, me, projects[i], row, row.content, vector, when, when
            )
            writer.memory_version(
                canonical,
                2,
                True,
                me,
                projects[i],
                row,
                row.content,
                vector,
                when,
                gone,
                deleted=True,
            )
            seeded.deleted.append(canonical)
        elif i % 17 == 3:
            # edited once or twice: earlier wordings, the same id (the old versions keep the
            # head's vector here; only heads are searched)
            versions = 3 if i % 51 == 3 else 2
            drafts = [f"{row.content} (to be confirmed)", f"{row.content} (checked once)"]
            for version in range(1, versions):
                writer.memory_version(
                    canonical,
                    version,
                    False,
                    me,
                    projects[i],
                    row,
                    drafts[version - 1],
                    vector,
                    when,
                    when + DAY * (version - 1),
                )
            writer.memory_version(
                canonical,
                versions,
                True,
                me,
                projects[i],
                row,
                row.content,
                vector,
                when,
                min(now, when + DAY * versions * 3),
            )
            seeded.edited.append(canonical)
        else:
            writer.memory_version(
                canonical, 1, True, me, projects[i], row, row.content, vector, when, when
            )
            if i % 3 and i % 29 != 11:
                seeded.plain.append(canonical)

    # contexts: 40 named ones; a third of the memories in one, a tenth of those in two
    home = project_id(ME, 0)
    contexts = [uuid.uuid4() for _ in CONTEXT_NAMES]
    for n, (canonical, name) in enumerate(zip(contexts, CONTEXT_NAMES, strict=True)):
        writer.objects.append(
            (
                canonical,
                1,
                True,
                home,
                me,
                "user",
                "MemoryContext",
                Jsonb({"name": name, "priority": 50 + (n % 5) * 10}),
                ["memory-context"],
                None,
                None,
                None,
                None,
                created[0],
                created[0],
            )
        )
    for i in range(0, len(rows), 3):
        writer.edge(
            "BELONGS_TO_CONTEXT",
            me,
            projects[i],
            ids[i],
            contexts[(i // 3) % len(contexts)],
            created[i],
        )
        if i % 30 == 0:
            writer.edge(
                "BELONGS_TO_CONTEXT",
                me,
                projects[i],
                ids[i],
                contexts[(i // 3 + 7) % len(contexts)],
                created[i],
            )
        if i not in superseded_by and i % 41 != 7:
            seeded.in_context.append(ids[i])

    # conversations automatic capture read (Episodes, in the home project) and the memories
    # derived from them
    episodes = [uuid.uuid4() for _ in range(size.episodes)]
    for n, canonical in enumerate(episodes):
        when = now - DAY * (size.episodes - n) / 3
        turns = rng.randint(4, 40)
        writer.objects.append(
            (
                canonical,
                1,
                True,
                home,
                me,
                "project",
                "Episode",
                Jsonb(
                    {
                        "session_id": f"session-{n}",
                        "first_turn": turns - 4,
                        "last_turn": turns,
                        "digest": f"{n:064x}",
                        "client": "claude-code",
                        "captured_at": when.isoformat(),
                        "text": " ".join(rows[(n * 7 + k) % len(rows)].content for k in range(12)),
                    }
                ),
                ["episode", "claude-code"],
                None,
                None,
                None,
                None,
                when,
                when,
            )
        )
    if episodes:
        for i in range(11, len(rows), 29):
            writer.edge(
                "DERIVED_FROM", me, projects[i], ids[i], episodes[(i // 29) % len(episodes)], now
            )
            seeded.derived.append(ids[i])

    # the recall log: two memories in five were recalled, a few of them often
    for i in range(len(rows)):
        if i % 5 < 2:
            uses = min(200, int(rng.paretovariate(1.3)))
            first = created[i]
            for _ in range(uses):
                at = first + (now - first) * rng.random()
                writer.recalls.append((ids[i], me, home, at))

    # the second actor (10,000 memories, the same texts as the first actor's first ones, so
    # a search that leaked would find them) and an administrator's global memories
    for name, count, scope in ((OTHER, size.other, None), (ADMIN, size.global_, "global")):
        owner = actor_id(name)
        for i, row in enumerate(rows[:count]):
            if scope is not None:
                row = generate.Synthetic(row.actor, 0, row.category, scope, row.content)
            canonical = uuid.uuid4()
            writer.memory_version(
                canonical,
                1,
                True,
                owner,
                project_id(name, row.project),
                row,
                row.content,
                vectors[i],
                created[i],
                created[i],
            )
            if name == OTHER:
                seeded.others.append(canonical)
                if i % 4 == 0:
                    writer.recalls.append((canonical, owner, project_id(name, 0), created[i] + DAY))

    with conn.transaction():
        for name, projects_count in ((ME, 3), (OTHER, 3), (ADMIN, 1)):
            for project in range(projects_count):
                graph.install_pack(conn, project_id(name, project), "agent-memory")
        definition = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (HNSW,))
        create_hnsw = definition.fetchone()[0]  # type: ignore[index]
        conn.execute(f"DROP INDEX kb.{HNSW}")
        with conn.cursor() as cur:
            for statement, batch in (
                (COPY_OBJECTS, writer.objects),
                (COPY_EDGES, writer.edges),
                (COPY_RECALLS, writer.recalls),
            ):
                with cur.copy(statement) as copy:
                    for values in batch:
                        copy.write_row(values)
        conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
        conn.execute(create_hnsw)
    # (the recall log's trigger filled kb.memory_use_counts row by row: vacuumed too, as
    # autovacuum would after such a load)
    for table in ("graph_objects", "graph_relationships", "memory_recalls", "memory_use_counts"):
        conn.execute(f"VACUUM ANALYZE kb.{table}")
    seeded.seconds = round(time.perf_counter() - start, 1)
    # the memory pages ask for memories the principal (the home project) sees: its user
    # memories and the project memories of the home project
    visible = {ids[i] for i, row in enumerate(rows) if row.scope == "user" or row.project == 0}
    for kind in (
        seeded.edited,
        seeded.superseded,
        seeded.superseding,
        seeded.deleted,
        seeded.in_context,
        seeded.derived,
        seeded.plain,
    ):
        kind[:] = [canonical for canonical in kind if canonical in visible]
    seeded.counts = {
        "memory_heads_first_actor": len(rows),
        "object_rows": len(writer.objects),
        "edges": len(writer.edges),
        "recall_log_rows": len(writer.recalls),
        "edited": len(seeded.edited),
        "superseded": len(seeded.superseded),
        "deleted": len(seeded.deleted),
        "memories_in_a_context": len(rows[::3]),
        "derived_from_an_episode": len(seeded.derived),
        "second_actor_memories": size.other,
        "global_memories": size.global_,
    }
    return seeded


# -- the server ------------------------------------------------------------------------------


class ServerTimer:
    """ASGI wrapper: the time each HTTP request spends in the app, from its arrival to the
    last byte of its body (what the app and the services below it cost, without the client
    or the socket)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.last_ms: float | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def timed_send(message: Any) -> None:
            # taken as the last body is handed to the server (after it is sent, the client
            # may already have read the answer and asked for the time)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.last_ms = (time.perf_counter() - start) * 1000
            await send(message)

        await self.app(scope, receive, timed_send)


@dataclass
class RunningServer:
    base: str
    timer: ServerTimer
    stop: Callable[[], None]


@contextmanager
def serve(database_url: str) -> Iterator[RunningServer]:
    """The app `serve --transport http` serves (cli.serve.build_http_app on the services
    open_server_services opens, without the worker threads), connected as the application
    role, on a socket of the product's listening_socket, wrapped in a ServerTimer, served by
    uvicorn configured as mcp/http.serve_http configures it (here in a thread this benchmark
    can stop)."""
    import asyncio

    import uvicorn

    from emergent_memory.app import open_server_services
    from emergent_memory.cli.serve import build_http_app
    from emergent_memory.mcp.http import listening_socket
    from emergent_memory.settings import Settings

    settings = Settings(database_url=app_role_url(database_url))
    with (
        open_server_services(settings, worker=False, load_model="now") as services,
        listening_socket("127.0.0.1", free_port()) as sock,
    ):
        timer = ServerTimer(build_http_app(settings, services))
        config = uvicorn.Config(
            timer,
            log_config=None,
            log_level=None,
            access_log=False,
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="serve", daemon=True
        )
        thread.start()
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        deadline = time.monotonic() + 60
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not server.started:
            raise RuntimeError("the HTTP server did not start")

        def stop() -> None:
            server.should_exit = True
            thread.join(timeout=30)

        try:
            yield RunningServer(base, timer, stop)
        finally:
            stop()


# -- measuring -------------------------------------------------------------------------------


Request = Callable[[httpx.Client, int], httpx.Response]
Check = Callable[[httpx.Response, int], bool]
UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Probe:
    """One kind of request, timed `calls` times: `request` makes the i-th one, `check` says
    whether its answer is right (the memories asked for, none of another actor's)."""

    name: str
    kind: str  # list, search, memory (the targets), or baseline
    request: Request
    check: Check


def measure_probe(
    client: httpx.Client, server: RunningServer, probe: Probe, calls: int
) -> dict[str, Any]:
    for i in range(3):  # warm up (plans, caches, the model's first use)
        probe.request(client, i)
    server_ms: list[float] = []
    round_trip_ms: list[float] = []
    statuses: dict[int, int] = {}
    sizes: list[int] = []
    checked = 0
    for i in range(calls):
        server.timer.last_ms = None
        start = time.perf_counter()
        response = probe.request(client, i)
        round_trip_ms.append((time.perf_counter() - start) * 1000)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        sizes.append(len(response.content))
        if server.timer.last_ms is not None:
            server_ms.append(server.timer.last_ms)
        checked += response.status_code == 200 and probe.check(response, i)
    result: dict[str, Any] = {
        "kind": probe.kind,
        "server_ms": percentiles(server_ms),
        "round_trip_ms": percentiles(round_trip_ms),
        "statuses": statuses,
        "checked": checked,
        "mean_bytes": round(sum(sizes) / len(sizes)),
    }
    target = TARGETS_MS.get(probe.kind)
    if target is not None:
        result["target_p95_ms"] = target
        result["met"] = checked == calls and result["server_ms"]["p95"] <= target
    return result


@dataclass
class Probes:
    """What every probe needs: the token, the ids to ask for and to never see."""

    token: str
    seeded: Seeded
    queries: list[str]
    memories: list[uuid.UUID]
    others: frozenset[str]
    deep_from: int
    missing: dict[str, str] = field(default_factory=dict)  # probes not run, and why

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def no_leak(self, text: str) -> bool:
        return not (set(UUID_TEXT.findall(text)) & self.others)

    def memory_ids(self, response: httpx.Response) -> list[str]:
        return [m["id"] for m in response.json()["memories"]]

    def baselines(self) -> list[Probe]:
        def health(client: httpx.Client, i: int) -> httpx.Response:
            return client.get("/health")

        def context(client: httpx.Client, i: int) -> httpx.Response:
            body = {"session_id": f"bench-{i}-{time.monotonic_ns()}", "event": "session_start"}
            return client.post("/api/v1/context", json=body, headers=self.auth)

        return [
            Probe("GET /health", "baseline", health, lambda r, i: r.json() == {"status": "ok"}),
            Probe(
                "POST /api/v1/context (session start)",
                "baseline",
                context,
                lambda r, i: bool(r.json()["memories"]) and self.no_leak(r.text),
            ),
        ]

    def rest(self, client: httpx.Client) -> list[Probe]:
        """GET /api/v1/memories (a first page; filtered; deep pages by cursor), the search,
        a memory."""
        probes: list[Probe] = []
        first = client.get("/api/v1/memories", params={"limit": 50}, headers=self.auth)
        if first.status_code != 200:
            self.missing["REST list"] = f"GET /api/v1/memories answered {first.status_code}"
        else:

            def listed(params: dict[str, Any]) -> Request:
                return lambda client, i: client.get(
                    "/api/v1/memories", params=params, headers=self.auth
                )

            def page_check(r: httpx.Response, i: int) -> bool:
                full = len(self.memory_ids(r)) == 50 or r.json()["next_cursor"] is None
                return full and self.no_leak(r.text)

            fact = {"limit": 50, "category": "fact", "sort": "most_used"}
            probes.append(
                Probe("REST list: first page (50)", "list", listed({"limit": 50}), page_check)
            )
            probes.append(
                Probe("REST list: category fact, most used first", "list", listed(fact), page_check)
            )
            cursors = self._rest_cursors(client, {"limit": 50, "category": "fact"})
            if cursors:
                probes.append(
                    Probe(
                        f"REST list: category fact, {_deep(self.deep_from, cursors)}",
                        "list",
                        lambda client, i: client.get(
                            "/api/v1/memories",
                            params={
                                "limit": 50,
                                "category": "fact",
                                "cursor": cursors[i % len(cursors)],
                            },
                            headers=self.auth,
                        ),
                        page_check,
                    )
                )
        probes.append(
            Probe(
                "REST search (hybrid recall, 10)",
                "search",
                lambda client, i: client.get(
                    "/api/v1/memories/search",
                    params={"query": self.queries[i % len(self.queries)]},
                    headers=self.auth,
                ),
                lambda r, i: bool(self.memory_ids(r)) and self.no_leak(r.text),
            )
        )
        one = client.get(f"/api/v1/memories/{self.memories[0]}", headers=self.auth)
        if one.status_code != 200:
            self.missing["REST memory"] = f"GET /api/v1/memories/{{id}} answered {one.status_code}"
        else:
            probes.append(
                Probe(
                    "REST memory (versions, supersessions, relationships, provenance)",
                    "memory",
                    lambda client, i: client.get(
                        f"/api/v1/memories/{self.memories[i % len(self.memories)]}",
                        headers=self.auth,
                    ),
                    lambda r, i: r.json()["id"] == str(self.memories[i % len(self.memories)]),
                )
            )
        return probes

    def _rest_cursors(self, client: httpx.Client, params: dict[str, Any]) -> list[str]:
        """The cursors of pages deep_from onwards (walked from the first page)."""
        cursors: list[str] = []
        cursor = None
        for page in range(1, self.deep_from + DEEP_PAGES - 1):
            answer = client.get(
                "/api/v1/memories",
                params={**params, "cursor": cursor} if cursor else params,
                headers=self.auth,
            ).json()
            cursor = answer.get("next_cursor")
            if cursor is None:
                break
            if page + 1 >= self.deep_from:
                cursors.append(cursor)
        return cursors

    def dashboard(self, client: httpx.Client) -> list[Probe]:
        """The pages: browse (first page; filtered, deep by cursor), search (the page, and the
        results fragment the search box fetches as one types), a memory's page."""

        def page(path: str, params: Callable[[int], dict[str, Any]] | None = None) -> Request:
            return lambda client, i: client.get(path, params=params(i) if params else None)

        def html_check(r: httpx.Response, i: int) -> bool:
            return "text/html" in r.headers.get("content-type", "") and self.no_leak(r.text)

        def listing_check(r: httpx.Response, i: int) -> bool:
            return html_check(r, i) and bool(MEMORY_LINK.search(r.text))

        def search_params(i: int) -> dict[str, Any]:
            return {"q": self.queries[i % len(self.queries)]}

        probes = [
            Probe("dashboard browse: first page", "list", page("/ui/memories"), listing_check),
            Probe(
                "dashboard browse: all projects, first page",
                "list",
                page("/ui/memories", lambda i: {"project": "all"}),
                listing_check,
            ),
            Probe(
                "dashboard import page (the form)",
                "memory",
                page("/ui/import"),
                lambda r, i: html_check(r, i) and 'id="import-form"' in r.text,
            ),
            Probe(
                "dashboard browse: category fact, most used first",
                "list",
                page("/ui/memories", lambda i: {"category": "fact", "sort": "most_used"}),
                listing_check,
            ),
        ]
        cursors = self._page_cursors(client, {"category": "fact"})
        if cursors:
            probes.append(
                Probe(
                    f"dashboard browse: category fact, {_deep(self.deep_from, cursors)}",
                    "list",
                    page(
                        "/ui/memories",
                        lambda i: {"category": "fact", "cursor": cursors[i % len(cursors)]},
                    ),
                    listing_check,
                )
            )
            previous = self._previous_cursors(client, {"category": "fact"}, cursors)
            if previous:
                probes.append(
                    Probe(
                        "dashboard browse: category fact, the pages before those by cursor "
                        "(previous: the index read backwards)",
                        "list",
                        page(
                            "/ui/memories",
                            lambda i: {"category": "fact", "cursor": previous[i % len(previous)]},
                        ),
                        listing_check,
                    )
                )
        else:
            self.missing["dashboard deep pages"] = "the browse page links to no next page"
        last = LAST_PAGE.search(html.unescape(client.get("/ui/memories").text))
        if last:
            pages = int(last.group(1))
            probes += [
                Probe(
                    f"dashboard browse: the last page by number ({pages:,}, read backwards)",
                    "list",
                    page("/ui/memories", lambda i: {"page": pages}),
                    listing_check,
                ),
                Probe(
                    f"dashboard browse: page {min(JUMP_PAGE, pages)} by number "
                    f"({(min(JUMP_PAGE, pages) - 1) * 50:,} rows skipped, the most a jump skips)",
                    "list",
                    page("/ui/memories", lambda i: {"page": min(JUMP_PAGE, pages)}),
                    listing_check,
                ),
            ]
        else:
            self.missing["dashboard numbered pages"] = "the browse page links to no last page"

        def found_check(r: httpx.Response, i: int) -> bool:
            return html_check(r, i) and bool(MEMORY_LINK.search(r.text))

        probes += [
            Probe(
                "dashboard search: the page",
                "search",
                page("/ui/search", search_params),
                found_check,
            ),
            Probe(
                "dashboard search: results fragment (as one types)",
                "search",
                page("/ui/search/results", search_params),
                found_check,
            ),
            Probe(
                "dashboard memory page",
                "memory",
                lambda client, i: client.get(
                    f"/ui/memories/{self.memories[i % len(self.memories)]}"
                ),
                lambda r, i: (
                    html_check(r, i) and str(self.memories[i % len(self.memories)]) in r.text
                ),
            ),
        ]
        return probes

    def _page_cursors(self, client: httpx.Client, params: dict[str, Any]) -> list[str]:
        cursors: list[str] = []
        cursor = None
        for page in range(1, self.deep_from + DEEP_PAGES - 1):
            text = client.get(
                "/ui/memories", params={**params, "cursor": cursor} if cursor else params
            ).text
            found = NEXT_CURSOR.search(html.unescape(text))
            if found is None:
                break
            cursor = unquote_plus(found.group(1))
            if page + 1 >= self.deep_from:
                cursors.append(cursor)
        return cursors

    def _previous_cursors(
        self, client: httpx.Client, params: dict[str, Any], cursors: list[str]
    ) -> list[str]:
        """The previous-page cursors of the pages these cursors open."""
        found: list[str] = []
        for cursor in cursors:
            text = client.get("/ui/memories", params={**params, "cursor": cursor}).text
            previous = PREVIOUS_CURSOR.search(html.unescape(text))
            if previous:
                found.append(unquote_plus(previous.group(1)))
        return found


DEEP_PAGES = 10
JUMP_PAGE = 51  # browse.JUMP_ROWS (2,500) rows before it: the furthest a jump by number reads


def _deep(deep_from: int, cursors: list[str]) -> str:
    return f"pages {deep_from} to {deep_from + len(cursors) - 1} by cursor"


MEMORY_LINK = re.compile(r"/ui/memories/([0-9a-f-]{36})")
PREVIOUS_CURSOR = re.compile(r"id=\"previous-page\"[^>]*href=\"[^\"]*[?&]cursor=([^&\"]+)")
LAST_PAGE = re.compile(r"id=\"last-page\"[^>]*href=\"[^\"]*[?&]page=(\d+)")
NEXT_CURSOR = re.compile(r"id=\"next-page\"[^>]*href=\"[^\"]*[?&]cursor=([^&\"]+)")


def _memory_sample(seeded: Seeded, rng: random.Random) -> list[uuid.UUID]:
    """Memories for the memory page: edited, superseded, superseding, deleted, in a context,
    derived from a conversation, plain; in turn."""
    kinds = [
        k
        for k in (
            seeded.edited,
            seeded.superseded,
            seeded.superseding,
            seeded.deleted,
            seeded.in_context,
            seeded.derived,
            seeded.plain,
        )
        if k
    ]
    return [rng.choice(kinds[n % len(kinds)]) for n in range(140)]


def service_baselines(url: str, model: LocalEmbeddings, calls: int) -> dict[str, Any]:
    """The service calls underneath the pages, in process, as the application role: what
    HTTP, the routes and the templates add on top."""
    pool = create_pool(app_role_url(url), min_size=1, max_size=2)
    try:
        service = MemoryService(pool, model, MemoryConfig(dedup_threshold=0.85))
        me = Principal(actor_id(ME), project_id(ME, 0), frozenset({READ, WRITE}))
        texts = generate.queries(calls)
        service.recall(me, "warm up")
        service.list_memories(me)
        counter = iter(range(10**9))
        return {
            "MemoryService.list_memories (50, most used first)": percentiles(
                timed(lambda: service.list_memories(me, limit=50), calls)
            ),
            "MemoryService.list_memories (category fact)": percentiles(
                timed(lambda: service.list_memories(me, category="fact", limit=50), calls)
            ),
            "MemoryService.recall (with the query's embedding)": percentiles(
                timed(lambda: service.recall(me, texts[next(counter) % calls]), calls)
            ),
        }
    finally:
        pool.close()


class _Recording:
    """A connection that keeps the statements run through it (to EXPLAIN them)."""

    def __init__(self, conn: Connection[Any]) -> None:
        self.conn = conn
        self.statements: list[tuple[Any, Any]] = []

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        self.statements.append((query, params))
        return self.conn.execute(query, params, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def explain_pages(url: str, deep_from: int) -> dict[str, str]:
    """EXPLAIN (ANALYZE, BUFFERS) of the browse list's page statements (memory/browse_store.py)
    for the list probes, as the application role with the principal set."""
    from psycopg import ClientCursor

    from emergent_memory.memory import browse_store

    me = Principal(actor_id(ME), project_id(ME, 0), frozenset({READ}))
    cases: dict[str, tuple[str, dict[str, Any], int]] = {
        "first page, recent": ("recent", {}, 0),
        "category fact, most used first": ("most_used", {"category": "fact"}, 0),
        f"category fact, recent, page {deep_from}": ("recent", {"category": "fact"}, deep_from - 1),
    }
    plans: dict[str, str] = {}
    pool = create_pool(app_role_url(url), min_size=1, max_size=1)
    try:
        for name, (sort, filters, skip) in cases.items():
            with pool.connection() as conn, conn.transaction():
                graph.act_as(conn, me.actor_id, me.project_id)
                after = None
                for _ in range(skip):
                    rows = browse_store.page(
                        conn, me, status="active", sort=sort, filters=filters, after=after, limit=51
                    )
                    after = rows[-2][1:] if len(rows) == 51 else after
                recording = _Recording(conn)
                browse_store.page(
                    recording,  # type: ignore[arg-type]
                    me,
                    status="active",
                    sort=sort,
                    filters=filters,
                    after=after,
                    limit=51,
                )
                explained = []
                for query, params in recording.statements:
                    text = ClientCursor(conn).mogrify(query, params)
                    if text.lstrip().upper().startswith("SET "):
                        conn.execute(text)  # the planner settings the page statement runs with
                        explained.append(text)
                        continue
                    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + text).fetchall()
                    explained.append(text + "\n" + "\n".join(row[0] for row in plan))
                plans[name] = "\n\n".join(explained)
    finally:
        pool.close()
    return plans


# -- page weight -----------------------------------------------------------------------------


class _Assets(html.parser.HTMLParser):
    """What a page makes the browser fetch: stylesheets, scripts, images, icons, preloads."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "link" and values.get("href"):
            rel = values.get("rel", "").lower()
            if any(r in rel for r in ("stylesheet", "icon", "preload", "modulepreload")):
                self.urls.append(values["href"])
        elif tag in ("script", "img") and values.get("src"):
            self.urls.append(values["src"])
        elif tag == "form":
            self.forms.append({"action": values.get("action", ""), "inputs": {}})
        elif tag == "input" and self.forms:
            self.forms[-1]["inputs"][values.get("name", "")] = values


CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)")


def page_weight(client: httpx.Client, path: str) -> dict[str, Any]:
    """A page's HTML and every same-origin file it references (and their CSS references),
    fetched once each: bytes as sent, and gzip-compressed (level 6, what a reverse proxy
    would send)."""
    page = client.get(path)
    files: dict[str, bytes] = {str(page.url): page.content}
    parser = _Assets()
    parser.feed(page.text)
    queue = [urljoin(str(page.url), url) for url in parser.urls]
    while queue:
        url = queue.pop()
        if url in files or urlsplit(url).netloc != urlsplit(str(page.url)).netloc:
            continue
        response = client.get(url)
        files[url] = response.content
        if url.split("?")[0].endswith(".css"):
            queue += [
                urljoin(url, found)
                for found in CSS_URL.findall(response.text)
                if not found.startswith("data:")
            ]
    listed = {
        urlsplit(url).path: {"bytes": len(body), "gzip_bytes": len(gzip.compress(body, 6))}
        for url, body in files.items()
    }
    total = sum(f["bytes"] for f in listed.values())
    total_gzip = sum(f["gzip_bytes"] for f in listed.values())
    return {
        "status": page.status_code,
        "content_encoding": page.headers.get("content-encoding"),
        "files": listed,
        "bytes": total,
        "gzip_bytes": total_gzip,
    }


def sign_in(client: httpx.Client, token: str) -> dict[str, Any]:
    """Sign in to the dashboard as a person would: the sign-in page's form, filled with the
    token (its hidden fields, the CSRF token among them, as the page gave them)."""
    page = client.get("/ui/", follow_redirects=True)
    parser = _Assets()
    parser.feed(page.text)
    form = next((f for f in parser.forms if any("token" in n for n in f["inputs"])), None)
    if form is None:
        return {"signed_in": False, "page": str(page.url), "status": page.status_code}
    data = {
        name: values.get("value", "")
        for name, values in form["inputs"].items()
        if name and values.get("type", "text") == "hidden"
    }
    field_name = next(n for n in form["inputs"] if "token" in n)
    data[field_name] = token
    answer = client.post(
        urljoin(str(page.url), form["action"] or str(page.url)),
        data=data,
        headers={"Origin": f"{page.url.scheme}://{page.url.netloc.decode()}"},
        follow_redirects=True,
    )
    return {
        "signed_in": answer.status_code == 200 and bool(client.cookies),
        "cookies": sorted(client.cookies.keys()),
        "sign_in_page": urlsplit(str(page.url)).path,
        "landed_on": urlsplit(str(answer.url)).path,
        "status": answer.status_code,
    }


def http_client(base: str) -> httpx.Client:
    """A client that sends each request at once (TCP_NODELAY: without it, a small request
    body waits for the delayed ACK of its headers, about 40 ms on loopback)."""
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    return httpx.Client(
        base_url=base, timeout=60, transport=httpx.HTTPTransport(socket_options=nodelay)
    )


# -- the run ---------------------------------------------------------------------------------


def _embedder(scale: str) -> tuple[LocalEmbeddings, Embed]:
    """The local model, and the documents' vectors: from the on-disk cache for the full run
    (the latency benchmark's texts), computed for the smoke run (a few hundred texts take
    less time than loading the cache)."""
    if scale == "full":
        cached = CachedEmbeddings()

        def from_cache(texts: list[str]) -> list[Vector]:
            vectors = cached.vectors(texts)
            cached.save()
            return [Vector(v.tolist()) for v in vectors]

        return cached.model, from_cache
    model = LocalEmbeddings()
    return model, lambda texts: [Vector(v) for v in model.embed_documents(texts)]


def run(scale: str = "full", calls: int = 100) -> dict[str, Any]:
    size = SIZES[scale]
    model, embed = _embedder(scale)
    with bench_database() as url:
        owner_pool = create_pool(url, min_size=1, max_size=1)
        try:
            with owner_pool.connection() as conn:
                conn.autocommit = True
                seeded = seed(conn, size, embed, model.model_name)
                print(f"seeded in {seeded.seconds} s: {seeded.counts}", file=sys.stderr)
        finally:
            owner_pool.close()
        with psycopg.connect(url) as conn:
            token = tokens.create_token(
                conn,
                name="bench",
                actor_id=actor_id(ME),
                project_id=project_id(ME, 0),
                # as `emergent-memory ui` signs in: every page then lists the actor's projects
                scopes=[READ, WRITE, ANY_PROJECT],
            ).token
        baselines = service_baselines(url, model, calls)
        plans = explain_pages(url, size.deep_from)
        probes = Probes(
            token,
            seeded,
            generate.queries(calls),
            _memory_sample(seeded, random.Random(5)),
            frozenset(str(i) for i in seeded.others),
            size.deep_from,
        )
        measured: dict[str, Any] = {}
        with serve(url) as server:
            with http_client(server.base) as visitor:
                weight = {"sign-in page": page_weight(visitor, "/ui/signin")}
            with http_client(server.base) as client:
                signed = sign_in(client, token)
                chosen = probes.baselines() + probes.rest(client)
                if signed["signed_in"]:
                    weight["first page after signing in"] = page_weight(client, "/ui/")
                    weight["browse page"] = page_weight(client, "/ui/memories")
                    weight["a memory's page"] = page_weight(
                        client, f"/ui/memories/{probes.memories[0]}"
                    )
                    chosen += probes.dashboard(client)
                else:
                    probes.missing["dashboard pages"] = f"could not sign in: {signed}"
                for probe in chosen:
                    measured[probe.name] = measure_probe(client, server, probe, calls)
                    print(f"{probe.name}: {measured[probe.name]['server_ms']}", file=sys.stderr)
    result = {
        "scale": scale,
        "calls": calls,
        "seed": {"counts": seeded.counts, "load_seconds": seeded.seconds},
        "requests": measured,
        "not_measured": probes.missing,
        "service_baselines_ms": baselines,
        "explain": plans,
        "page_weight": weight,
        "sign_in": signed,
        "targets": {"p95_ms": TARGETS_MS, "page_weight_bytes": PAGE_WEIGHT_TARGET_BYTES},
        "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()},
    }
    write_result(f"dashboard-{scale}" if scale != "full" else "dashboard", result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    counts = result["seed"]["counts"]
    lines = [
        "# Dashboard and REST API",
        "",
        f"{counts['memory_heads_first_actor']:,} memories of one actor "
        f"({counts['edited']:,} edited, {counts['superseded']:,} superseded, "
        f"{counts['deleted']:,} deleted, {counts['memories_in_a_context']:,} in a context, "
        f"{counts['derived_from_an_episode']:,} derived from a captured conversation; "
        f"{counts['recall_log_rows']:,} recall log rows), "
        f"{counts['second_actor_memories']:,} of a second actor and "
        f"{counts['global_memories']:,} global ones; loaded in {result['seed']['load_seconds']} s. "
        f"{result['machine']['cpus']} CPUs, load average "
        f"{', '.join(f'{x:.1f}' for x in result['machine']['load_average'])} at the end.",
        "",
        f"Server time (in the app, from the request's arrival to its last byte) and round trip "
        f"over loopback, p50 / p95 / p99 in ms over {result['calls']} requests each, as the "
        "application role (row-level security):",
        "",
        "| request | server time | round trip | target p95 | met | bytes |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in result["requests"].items():
        s, r = row["server_ms"], row["round_trip_ms"]
        target = row.get("target_p95_ms")
        met = "" if target is None else ("yes" if row["met"] else "**no**")
        lines.append(
            f"| {name} | {s['p50']} / {s['p95']} / {s['p99']} | "
            f"{r['p50']} / {r['p95']} / {r['p99']} | {'' if target is None else target} | "
            f"{met} | {row['mean_bytes']:,} |"
        )
    if result["not_measured"]:
        lines += ["", "Not measured:", ""]
        lines += [f"- {name}: {why}" for name, why in result["not_measured"].items()]
    lines += ["", "Baselines: the service calls underneath, in process (p50 / p95 / p99 ms):", ""]
    execution = re.compile(r"Execution Time: ([0-9.]+) ms")
    for name, p in result["service_baselines_ms"].items():
        lines.append(f"- {name}: {p['p50']} / {p['p95']} / {p['p99']}")
    lines += ["", "EXPLAIN ANALYZE of the list's page statements (plans in the JSON result):", ""]
    for name, plan in result["explain"].items():
        times = ", ".join(f"{t} ms" for t in execution.findall(plan))
        lines.append(f"- {name}: {times}")
    lines += [
        "",
        f"Page weight of the first load (target under {PAGE_WEIGHT_TARGET_BYTES // 1000} KB):",
        "",
    ]
    for name, weight in result["page_weight"].items():
        lines.append(
            f"- {name}: {weight['bytes'] / 1000:.1f} KB as sent, "
            f"{weight['gzip_bytes'] / 1000:.1f} KB gzipped, {len(weight['files'])} files "
            f"(HTTP {weight['status']})"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "full"
    print(markdown(run(chosen, calls=5 if chosen == "smoke" else 100)))
