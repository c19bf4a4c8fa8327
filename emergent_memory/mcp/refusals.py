"""What the HTTP server's /mcp answers a request without a live bearer token: a 401 whose
JSON-RPC error says what is wrong and what to do, never a word about OAuth flows this server
does not have, and never the token that was sent."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NO_BEARER_ANSWER = (
    "this server needs a bearer token: send the header Authorization: Bearer <token>; its "
    "administrator creates one with `emergent-memory token create --name NAME` (docs/clients.md "
    "shows where each MCP client takes it)"
)
BAD_BEARER_ANSWER = (
    "the bearer token is not valid: it is unknown, revoked or expired; send a live token (its "
    "administrator creates one with `emergent-memory token create --name NAME`)"
)


class TokenRefusals:
    """ASGI middleware of the HTTP server: the 401 answers of /mcp say what to do. FastMCP
    answers a request without a bearer token with an empty body, and one with a bad token
    with advice about OAuth re-registration, which this server does not have; both become a
    JSON-RPC error naming the problem and the fix (WWW-Authenticate as RFC 6750 says: no error
    attribute without a token, invalid_token with a bad one)."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        authorization = Headers(scope=scope).get("authorization", "")
        with_token = authorization[:7].lower() == "bearer "
        refused = False

        async def answer(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
                await _unauthorized(with_token)(scope, receive, send)
            elif not refused:
                await send(message)

        await self.app(scope, receive, answer)


def _unauthorized(with_token: bool) -> JSONResponse:
    challenge = (
        f'Bearer error="invalid_token", error_description="{BAD_BEARER_ANSWER.split(":")[0]}"'
        if with_token
        else "Bearer"
    )
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": BAD_BEARER_ANSWER if with_token else NO_BEARER_ANSWER,
            },
        },
        status_code=401,
        headers={"WWW-Authenticate": challenge},
    )
