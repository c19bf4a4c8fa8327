"""The stdio transport: the MCP server on standard input and output, one JSON-RPC message a
line, where every line gets an answer.

The MCP SDK reads each line and hands a line it cannot read (not JSON, or JSON that is not a
JSON-RPC message) to the server as an exception, which the server drops: the client would
wait for an answer that never comes. Here such a line is answered as JSON-RPC says, with
id null: -32700 "Parse error" for a line that is not JSON, -32600 "Invalid Request" for JSON
that is not a JSON-RPC message; the server keeps serving the lines that follow. The answer
names the problem, never the line's text. Escaped halves of surrogate pairs are marked
before the SDK reads a line (mcp/arguments.py), so that the tool reports them.
"""

from __future__ import annotations

import logging

import anyio
from fastmcp import FastMCP
from fastmcp.server.context import reset_transport, set_transport
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError
from pydantic import ValidationError

from emergent_memory.mcp.arguments import stdin_with_marked_surrogates

logger = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC error codes

NOT_JSON = "Parse error: the line is not JSON; send one JSON-RPC message per line, as UTF-8"
NOT_JSON_RPC = (
    "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (it needs "
    '"jsonrpc": "2.0" and a method, or a result or error with an id)'
)

Inbound = SessionMessage | Exception


def run_stdio(server: FastMCP) -> None:
    """Serve `server` on standard input and output until the input ends."""
    with stdin_with_marked_surrogates():
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: FastMCP) -> None:
    """What FastMCP's run_stdio_async does, with the lines the SDK could not read answered
    (answer_unreadable) instead of dropped."""
    transport = set_transport("stdio")
    try:
        async with server._lifespan_manager(), stdio_server() as (lines, out):
            readable_in, readable = anyio.create_memory_object_stream[Inbound](0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable, lines, readable_in, out)
                low_level = server._mcp_server
                await low_level.run(readable, out, low_level.create_initialization_options())
                tasks.cancel_scope.cancel()
    finally:
        reset_transport(transport)


async def answer_unreadable(
    lines: ReadStream[Inbound], readable: WriteStream[Inbound], out: WriteStream[SessionMessage]
) -> None:
    """Pass each message read from `lines` on to `readable`; answer each line that could not
    be read (an exception in its place) on `out` with a JSON-RPC error, id null, except a
    blank line, which is no message at all. The end of `lines` is passed on."""
    async with readable:
        async for item in lines:
            if not isinstance(item, Exception):
                await readable.send(item)
                continue
            answer = unreadable_line_error(item)
            if answer is not None:
                logger.info("stdio: %s", answer.error.message.split(":")[0])
                await out.send(SessionMessage(answer))


def unreadable_line_error(error: Exception) -> JSONRPCError | None:
    """The JSON-RPC error for a line the SDK could not read (its pydantic error says whether
    the line was JSON at all); None for a blank line."""
    details = error.errors() if isinstance(error, ValidationError) else []
    if any(detail["type"] == "json_invalid" for detail in details):
        if all(str(detail.get("input", "")).strip() == "" for detail in details):
            return None
        code, message = PARSE_ERROR, NOT_JSON
    else:
        code, message = INVALID_REQUEST, NOT_JSON_RPC
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
