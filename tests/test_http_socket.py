"""The HTTP server's listening socket: responses on a kept-alive connection are not held back.

uvicorn serves the socket that mcp/http.py listening_socket opens; asyncio turns Nagle's
algorithm off (TCP_NODELAY) only on accepted sockets whose protocol says TCP. With protocol 0
every response after the first on a keep-alive connection waited for the client's delayed ACK
(about 40 ms on loopback: a browser's every page and asset, an MCP client's every call).
"""

from __future__ import annotations

import asyncio
import socket

from emergent_memory.mcp.http import listening_socket


def test_the_listening_socket_says_tcp() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_connections_accepted_by_asyncio_have_nagle_off() -> None:
    async def scenario() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            accepted.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        sock = listening_socket("127.0.0.1", 0)
        server = await asyncio.start_server(on_connection, sock=sock)
        async with server:
            port = sock.getsockname()[1]
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            nodelay = await asyncio.wait_for(accepted, 10)
            writer.close()
        return nodelay

    assert asyncio.run(scenario()) != 0
