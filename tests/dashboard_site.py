"""A running dashboard for the browser tests and the documentation's screenshots: the real
`emergent-memory serve --transport http` process on a database, the fake embedding provider
(bag-of-words vectors over HTTP, so the server starts in a moment), tokens, and memories seeded
through the same MemoryService the server runs (same settings, same embedder).

    with dashboard_site(owner_url, app_url) as site:
        token = site.token(actor, project)                 # read and write
        site.memory.save(principal, "...", "fact")     # principal: that actor and project
        page.goto(site.ui)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from emergent_memory.app import open_memory_service
from emergent_memory.auth.principal import READ, WRITE, Principal
from emergent_memory.memory import MemoryService
from emergent_memory.settings import Settings
from tests.embedders import EmbeddingServer
from tests.helpers import HttpServer, fake_embedder_env, http_server_process, make_token

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPOSITORY = Path(__file__).resolve().parents[1]
ARTIFACTS = REPOSITORY / "tests" / "artifacts"  # gitignored

# The bag-of-words vectors of the fake provider are far from a real model's: a lower dedup
# threshold than the uncalibrated 0.98, so that two memories differing in one value of a
# dozen words are flagged as possible duplicates (and the same threshold seeds and serves).
DEDUP_THRESHOLD = "0.8"


@dataclass
class Site:
    """The running server, its database and a MemoryService on the same settings."""

    server: HttpServer
    database_url: str  # the owner's (tokens are written with it)
    memory: MemoryService

    @property
    def base(self) -> str:
        return self.server.base

    @property
    def ui(self) -> str:
        return self.server.base + "/ui/"

    def token(self, actor: uuid.UUID, project: uuid.UUID, *scopes: str) -> str:
        """A new API token for `actor` in `project` (read and write unless `scopes`)."""
        token, _ = make_token(self.database_url, actor, project, *(scopes or (READ, WRITE)))
        return token


def new_principal() -> Principal:
    return Principal(actor_id=uuid.uuid4(), project_id=uuid.uuid4())


@contextmanager
def dashboard_site(
    database_url: str, app_url: str | None = None, **settings: str
) -> Iterator[Site]:
    """The HTTP server until it is healthy, and a MemoryService with the server's settings;
    both stopped at the end. `database_url`: the owner's URL of a migrated database (tokens
    are written with it); `app_url`: the same database as a member of emergent_memory_app,
    which the server and the seeding service connect as (row-level security applies, as in
    production; default the owner's). `settings`: more EMERGENT_MEMORY_ variables."""
    with ExitStack() as stack:
        embeddings = EmbeddingServer()
        embeddings.thread.start()
        stack.callback(embeddings.httpd.server_close)
        stack.callback(embeddings.httpd.shutdown)
        env = fake_embedder_env(
            embeddings,
            EMERGENT_MEMORY_DATABASE_URL=app_url or database_url,
            EMERGENT_MEMORY_DEDUP_THRESHOLD=DEDUP_THRESHOLD,
            **settings,
        )
        server = stack.enter_context(http_server_process(env))
        memory = stack.enter_context(open_memory_service(Settings(**_as_fields(env))))
        yield Site(server=server, database_url=database_url, memory=memory)


def _as_fields(env: dict[str, str]) -> dict[str, Any]:
    """Settings' keyword arguments from a server's EMERGENT_MEMORY_ variables."""
    prefix = "EMERGENT_MEMORY_"
    return {k.removeprefix(prefix).lower(): v for k, v in env.items() if k.startswith(prefix)}


# -- demo memories ----------------------------------------------------------------------------

DEMO_MEMORIES: list[tuple[str, str, str | None]] = [  # content, category, context
    ("The user prefers tabs over spaces in Python files", "preference", "style"),
    ("Run the test suite with make test before every commit", "instruction", "workflow"),
    ("The staging database runs PostgreSQL 16 with pgvector 0.8", "fact", "infrastructure"),
    ("Commit messages say why, not only what changed", "convention", "workflow"),
    ("The user reviews pull requests in the morning, before standup", "pattern", None),
    ("Never push directly to the main branch; open a pull request", "instruction", "workflow"),
    ("The API gateway times out requests after 30 seconds", "fact", "infrastructure"),
    ("Use pytest fixtures instead of setUp methods in new tests", "convention", "style"),
    ("The user writes documentation in British English", "preference", "style"),
    ("The deploy script lives in ops/deploy.sh and needs the VPN", "fact", "infrastructure"),
    ("Type hints on every public function; mypy runs in strict mode", "convention", "style"),
    ("The nightly backup of the production database finishes around 03:00 UTC", "fact", None),
]
# Saved after DEMO_MEMORIES: one value differs from a memory above, so the duplicate check
# flags the pair for a person to decide.
DEMO_DUPLICATE = (
    "The staging database runs PostgreSQL 17 with pgvector 0.8",
    "fact",
    "infrastructure",
)


def seed_demo(memory: MemoryService, principal: Principal) -> dict[str, str]:
    """A small, realistic history for `principal`: the memories above (some used by recalls),
    one edited (two versions, then importance and a rationale) and reinforced with evidence,
    one core, one archived with a reason, one deleted, and a possible duplicate. Their ids by
    name: "edited", "deleted", "archived", "duplicate", "first"."""
    ids: dict[str, str] = {}
    for content, category, context in DEMO_MEMORIES:
        saved = memory.save(principal, content, category, "explicit", context=context)  # type: ignore[arg-type]
        ids.setdefault("first", saved["memory"]["id"])
        ids[content] = saved["memory"]["id"]
    content, category, context = DEMO_DUPLICATE
    saved = memory.save(principal, content, category, "explicit", context=context)  # type: ignore[arg-type]
    ids["duplicate"] = saved["memory"]["id"]
    edited = ids["The API gateway times out requests after 30 seconds"]
    memory.update(
        principal, edited, {"content": "The API gateway times out requests after 60 seconds"}
    )
    ids["edited"] = edited
    memory.update(
        principal,
        edited,
        {"importance": "high", "rationale": "the load balancer closes idle connections at 60 s"},
    )
    memory.reinforce(principal, edited, "gateway.yaml: timeout: 60s", session_id="session-demo-1")
    core = ids["Never push directly to the main branch; open a pull request"]
    memory.update(principal, core, {"importance": "core"})
    archived = ids["The nightly backup of the production database finishes around 03:00 UTC"]
    memory.archive(principal, archived, reason="backups moved to the managed database service")
    ids["archived"] = archived
    deleted = ids["The user reviews pull requests in the morning, before standup"]
    memory.delete(principal, deleted)
    ids["deleted"] = deleted
    for query in ("how do I run the tests", "commit rules", "Python style", "test suite"):
        memory.recall(principal, query)
    return ids


def inject(
    site: Site, token: str, session_id: str, client: str = "claude-code", prompt: str | None = None
) -> dict[str, Any]:
    """What a session's start (or, with `prompt`, a prompt) injects, asked as the hooks ask
    (POST /api/v1/context with the token): the injection log then has this answer."""
    event = {"event": "session_start"} if prompt is None else {"event": "prompt", "prompt": prompt}
    answer = httpx.post(
        site.base + "/api/v1/context",
        json={"session_id": session_id, "client": client, **event},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    answer.raise_for_status()
    result: dict[str, Any] = answer.json()
    return result


# -- in the browser --------------------------------------------------------------------------


def sign_in(page: Page, site: Site, token: str) -> None:
    """Sign in through the form at /ui/signin (its labelled token field and its button)."""
    page.goto(site.base + "/ui/signin")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site.ui)  # the search page: signed in


def screenshot(page: Page, name: str, *, folder: Path = ARTIFACTS / "dashboard") -> Path:
    """The whole page as folder/NAME.png (the browser tests' artifacts; not committed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
