"""The streamable HTTP server: its listening socket, its ASGI app (request body guard, session
limits) and uvicorn, logging through the application's log."""

from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.http import StreamableHTTPASGIApp
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route

from emergent_memory.errors import AddressUnavailable
from emergent_memory.mcp.server import http_middleware

MCP_PATH = "/mcp"
# Connections the kernel queues while the server starts or is busy (uvicorn's default).
BACKLOG = 2048


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port and listening, before anything else starts; one clear
    AddressUnavailable if it cannot be had (port in use, foreign address, privileged port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # like uvicorn: a port whose last connections linger in TIME_WAIT can be reused at once
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise AddressUnavailable(_why_not(host, port, error)) from error
    return sock


def _why_not(host: str, port: int, error: OSError) -> str:
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {where}: port {port} is in use by another program (another "
            "emergent-memory server?); stop it, or choose another port with --port"
        )
    if error.errno == errno.EACCES:
        return (
            f"cannot listen on {where}: port {port} needs privileges; choose a port above "
            "1023 with --port"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {where}: {host} is not an address of this machine; use "
            "--host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"
        )
    if isinstance(error, socket.gaierror):
        return f"cannot listen on {where}: unknown host {host!r}; give an IP address with --host"
    return f"cannot listen on {where}: {error.strerror or error}"


def http_app(
    server: FastMCP,
    *,
    max_request_bytes: int,
    max_sessions: int,
    session_idle_timeout: float,
) -> Starlette:
    """The ASGI app: MCP at /mcp (each MCP session ends after `session_idle_timeout` seconds
    without a request; at most `max_sessions` are open at once, a client that would open
    another gets 503 until one ends), the custom routes (/health), the body guard."""
    app = server.http_app(
        path=MCP_PATH,
        middleware=http_middleware(max_request_bytes),
        session_idle_timeout=session_idle_timeout,
    )
    _limit_sessions(app, max_sessions)
    return app


def _limit_sessions(app: Starlette, max_sessions: int) -> None:
    """FastMCP builds the MCP SDK's session manager in the app's lifespan, without a way to
    pass its `max_sessions`: set it there, before the first request. (pyproject.toml requires
    an MCP SDK that has it; an older one is refused here, before the server starts.)"""
    if "max_sessions" not in inspect.signature(StreamableHTTPSessionManager).parameters:
        raise RuntimeError(
            "the installed MCP SDK (package mcp) cannot limit the number of sessions "
            "(StreamableHTTPSessionManager has no max_sessions): install mcp>=2.3"
        )
    endpoint = _mcp_endpoint(app)
    lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def limited(app: Starlette) -> AsyncIterator[Any]:
        async with lifespan(app) as state:
            manager = endpoint.session_manager
            assert manager is not None
            manager.max_sessions = max_sessions
            yield state

    app.router.lifespan_context = limited


def _mcp_endpoint(app: Starlette) -> StreamableHTTPASGIApp:
    for route in app.routes:
        if isinstance(route, Route) and route.path == MCP_PATH:
            endpoint = route.endpoint
            inner = getattr(endpoint, "app", endpoint)  # behind the authentication check
            if isinstance(inner, StreamableHTTPASGIApp):
                return inner
    raise RuntimeError(f"FastMCP's app has no streamable HTTP endpoint at {MCP_PATH}")


def serve_http(app: Starlette, sock: socket.socket) -> None:
    """Serve `app` on the listening socket until SIGINT or SIGTERM. uvicorn logs through the
    root logger (the application's format and level): its request lines are INFO."""
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level=None,
        access_log=logging.getLogger("uvicorn.access").isEnabledFor(logging.INFO),
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
