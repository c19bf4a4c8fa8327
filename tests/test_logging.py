"""What the server logs: never a memory's content, a query, a bearer token or a refused
secret, at any log level (docs/security.md, "What is logged")."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.embedders import EmbeddingServer
from tests.test_e2e import client_for, make_token, running_http_server

pytestmark = pytest.mark.anyio

CONTENT = "The user keeps the zanzibar marmalade recipe in the blue notebook"
QUERY = "where is the quokka-lantern recipe kept"
SECRET = "The staging database password=Xq7-hunter2-Vz9-plover"


@pytest.mark.parametrize("level", ["WARNING", "INFO", "DEBUG"])
async def test_the_server_log_holds_no_content_query_token_or_secret(
    app_database_url: str,
    database_url: str,
    embedding_server: EmbeddingServer,
    level: str,
) -> None:
    token, _ = make_token(database_url, uuid.uuid4(), uuid.uuid4())
    with running_http_server(
        app_database_url, embedding_server, EMERGENT_MEMORY_LOG_LEVEL=level
    ) as server:
        async with client_for(server, token) as client:
            saved: Any = await client.call_tool(
                "save_memory", {"content": CONTENT, "category": "fact"}
            )
            assert saved.structured_content["status"] == "created"
            await client.call_tool("recall_memories", {"query": QUERY})
            refused = await client.call_tool(
                "save_memory", {"content": SECRET, "category": "fact"}, raise_on_error=False
            )
            assert refused.is_error
            missing = await client.call_tool(
                "manage_memory",
                {"action": "delete", "memory_id": str(uuid.uuid4())},
                raise_on_error=False,
            )
            assert missing.is_error
    log = server.log
    assert "MCP over streamable HTTP at" in log  # the log was captured
    for private in (token, "zanzibar", "quokka", "Xq7-hunter2", "plover"):
        assert private not in log, f"{private!r} appears in the {level} log:\n{log}"
    if level == "INFO":
        # the caller's mistakes are there, as INFO, named by tool only
        assert "Error calling tool 'save_memory'" in log
        # one line per embedding request is noise, and a URL may hold credentials
        assert "/v1/embeddings" not in log
