"""A running dashboard for the browser tests and the documentation's screenshots: the real
`emergent-memory serve --transport http` process on a database, the fake embedding provider
(bag-of-words vectors over HTTP, so the server starts in a moment), tokens, and memories seeded
through the same MemoryService the server runs (same settings, same embedder).

    with dashboard_site(database_url, seeding_url) as site:
        token = site.token(actor, project)                 # read and write
        site.memory(actor, project).save(principal, "...", "fact")
        page.goto(site.ui)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
# threshold than the uncalibrated 0.95, so that two memories differing in one value of a
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
    database_url: str, seeding_url: str | None = None, **settings: str
) -> Iterator[Site]:
    """The HTTP server on `database_url` (migrated) until it is healthy, and a MemoryService on
    `seeding_url` (the application role's URL; default the owner's) with the server's
    settings; both stopped at the end. `settings`: more EMERGENT_MEMORY_ variables."""
    with ExitStack() as stack:
        embeddings = EmbeddingServer()
        embeddings.thread.start()
        stack.callback(embeddings.httpd.server_close)
        stack.callback(embeddings.httpd.shutdown)
        env = fake_embedder_env(
            embeddings,
            EMERGENT_MEMORY_DATABASE_URL=database_url,
            EMERGENT_MEMORY_DEDUP_THRESHOLD=DEDUP_THRESHOLD,
            **settings,
        )
        server = stack.enter_context(http_server_process(env))
        seeding = Settings(**_as_fields(env, seeding_url or database_url))
        memory = stack.enter_context(open_memory_service(seeding))
        yield Site(server=server, database_url=database_url, memory=memory)


def _as_fields(env: dict[str, str], database_url: str) -> dict[str, Any]:
    """Settings' keyword arguments from a server's EMERGENT_MEMORY_ variables."""
    prefix = "EMERGENT_MEMORY_"
    fields = {k.removeprefix(prefix).lower(): v for k, v in env.items() if k.startswith(prefix)}
    return fields | {"database_url": database_url}


# -- in the browser --------------------------------------------------------------------------


def sign_in(page: Page, site: Site, token: str) -> None:
    """Sign in through the form at /ui/ (its labelled token field and its button)."""
    page.goto(site.ui)
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def screenshot(page: Page, name: str, *, folder: Path = ARTIFACTS / "dashboard") -> Path:
    """The whole page as folder/NAME.png (the browser tests' artifacts; not committed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
