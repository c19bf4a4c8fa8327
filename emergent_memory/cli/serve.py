"""`emergent-memory serve`: the MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import ipaddress
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING

import click

from emergent_memory.cli.common import (
    ACTOR_OPTION,
    MIGRATE_OPTION,
    PROJECT_OPTION,
    cli,
    identity,
    reports_errors,
)
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.app import ServerServices
    from emergent_memory.auth.identity import LocalIdentity
    from emergent_memory.memory import MemoryService
    from emergent_memory.settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette


@cli.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for one local user; http for a shared server with API tokens.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP: port.")
@click.option(
    "--worker/--no-worker",
    default=True,
    show_default=True,
    help="Also run the embedding worker, and with an Anthropic key the capture worker, in "
    "threads sharing the server's pool and model.",
)
@ACTOR_OPTION
@PROJECT_OPTION
@MIGRATE_OPTION
@click.pass_obj
@reports_errors
def serve(
    settings: Settings,
    transport: str,
    host: str,
    port: int,
    worker: bool,
    actor: uuid.UUID | None,
    project: uuid.UUID | None,
    migrate: bool,
) -> None:
    """Run the MCP server (tools save_memory, recall_memories, manage_memory, verify_memory).

    stdio: acts for one local user (--actor / --project, or derived defaults, printed on
    stderr). http: streamable HTTP on --host/--port; every request needs
    `Authorization: Bearer <token>` (see `emergent-memory token create`).
    """

    if transport == "http" and (actor is not None or project is not None):
        raise InvalidInput(
            "over http the actor and project come from each request's token; drop --actor/--project"
        )

    def open_services() -> AbstractContextManager[ServerServices]:
        """The services (the database, its schema checked or migrated, the pool), opened once
        and held until the server stops (one use of the embedded server). With --worker,
        queued embeddings (and, with an Anthropic key, captured conversations) are worked
        here, not only by `emergent-memory worker`."""
        from emergent_memory.app import open_server_services

        # the embedded database is the user's own: a first `serve` (uvx, the plugin, a
        # client's configuration) makes and migrates it; a configured one only with --migrate
        embedded = settings.database_url is None
        return open_server_services(settings, migrate=migrate or embedded, worker=worker)

    if transport == "http":
        _serve_http(settings, open_services, host, port)
        return
    _serve_stdio(settings, identity(settings, actor, project), open_services)


def _serve_stdio(
    settings: Settings,
    local: LocalIdentity,
    open_services: Callable[[], AbstractContextManager[ServerServices]],
) -> None:
    """The stdio server. It answers `initialize` and `tools/list` at once; the services (the
    database started, its schema checked, the application's modules imported, the embedding
    model loading) open in the background, and a tool call waits for them
    (mcp/server.py ServiceHolder): a client's connection timeout never runs while they open,
    and a failure to open them (a database behind the schema, one that cannot be reached) is
    logged as one line and is each tool call's answer."""
    from emergent_memory.mcp.server import OPEN_WHEN_LISTED, Stopped, create_server
    from emergent_memory.mcp.stdio import run_stdio

    click.echo(f"emergent-memory: {local.describe()}", err=True)
    opened: list[ServerServices] = []

    listed, stopping = threading.Event(), threading.Event()

    @contextmanager
    def open_memory() -> Iterator[MemoryService]:
        from emergent_memory.db.connection import open_database

        # the embedded server joined first (a moment, when it runs), so that a server that
        # exits meanwhile (the previous session's) does not stop it under this one; then,
        # once the client has the tool list, the application and its services
        with open_database(settings.database_url, settings.data_dir):
            listed.wait(OPEN_WHEN_LISTED)
            if stopping.is_set():  # the client left before it asked for the tools
                raise Stopped
            with open_services() as services:
                opened.append(services)
                yield services.memory

    server = create_server(
        open_memory,
        lambda: local.principal,
        open_verifier=lambda memory: nullcontext(opened[0].verify),
        listed=listed,
        stopping=stopping,
    )
    # every line gets an answer: half a surrogate pair a tool error, a line that is not a
    # JSON-RPC message a JSON-RPC error (mcp/stdio.py)
    run_stdio(server)


def _serve_http(
    settings: Settings,
    open_services: Callable[[], AbstractContextManager[ServerServices]],
    host: str,
    port: int,
) -> None:
    """The streamable HTTP server. Its port is taken first, then the service is opened (a
    failure of either is one line, not uvicorn's traceback), then it prints its banner and
    serves."""
    from emergent_memory.mcp.http import listening_socket, serve_http

    with listening_socket(host, port) as sock:
        if not _is_loopback(host):
            click.echo(
                f"warning: listening on {host}, reachable from other machines; put TLS in "
                "front of it (a reverse proxy) and hand out tokens with care",
                err=True,
            )
        with open_services() as services:
            app = build_http_app(settings, services)
            capture = services.capture.config
            metrics_access = (
                "public: EMERGENT_MEMORY_METRICS_PUBLIC"
                if settings.metrics_public
                else "a token with the scope memory:admin"
            )
            capture_line = (
                f"  automatic capture: on (gate {capture.gate_model}, extractor "
                f"{capture.extractor_model})\n"
                if services.capture.enabled
                else "  automatic capture: off (set EMERGENT_MEMORY_ANTHROPIC_API_KEY to turn it "
                "on; docs/automatic-memory.md)\n"
            )
            click.echo(
                f"emergent-memory: MCP over streamable HTTP at http://{host}:{port}/mcp\n"
                f"  REST API (hooks, other clients) at http://{host}:{port}/api/v1\n"
                f"  dashboard (sign in with a token, or run `emergent-memory ui`) at "
                f"http://{host}:{port}/ui/\n"
                f"{capture_line}"
                f"  Prometheus metrics at http://{host}:{port}/metrics "
                f"({metrics_access}; docs/telemetry.md)\n"
                "  every request needs a token:  emergent-memory token create --name my-laptop\n"
                "  then send it as the header    Authorization: Bearer <token>\n"
                "  docs/clients.md shows the configuration of Claude Code, Claude Desktop, "
                "OpenCode",
                err=True,
            )
            serve_http(app, sock)


def build_http_app(settings: Settings, services: ServerServices) -> Starlette:
    """The HTTP server's ASGI app, as `serve --transport http` serves it: MCP at /mcp and the
    REST API at /api/v1, behind the bearer check of the services' tokens, and the dashboard
    at /ui (benchmarks time this same app)."""
    from emergent_memory.api import ApiServices, api_routes
    from emergent_memory.dashboard import UPLOADS, DashboardServices, dashboard_routes
    from emergent_memory.mcp.http import DatabaseTokenVerifier, http_app, token_principal
    from emergent_memory.mcp.server import create_server

    server = create_server(
        lambda: nullcontext(services.memory),
        token_principal,
        auth=DatabaseTokenVerifier(services.tokens.verify),
        open_verifier=lambda memory: nullcontext(services.verify),
    )
    return http_app(
        server,
        max_request_bytes=settings.max_request_bytes,
        max_sessions=settings.http_max_sessions,
        max_sessions_per_token=settings.http_max_sessions_per_token,
        max_sessions_per_actor=settings.http_max_sessions_per_actor,
        session_idle_timeout=settings.http_session_idle_timeout,
        metrics_public=settings.metrics_public,
        uploads=UPLOADS,
        routes=[
            *api_routes(
                ApiServices(
                    injection=services.injection,
                    capture=services.capture,
                    memory=services.memory,
                    browse=services.browse,
                    duplicates=services.duplicates,
                    verify=services.verify,
                    auto_memory=services.auto_memory,
                )
            ),
            *dashboard_routes(
                DashboardServices(
                    memory=services.memory,
                    sessions=services.dashboard,
                    browse=services.browse,
                    duplicates=services.duplicates,
                    verify=services.verify,
                    capture_on=services.capture.enabled,
                )
            ),
        ],
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
