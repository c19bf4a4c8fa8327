"""The REST API (/api/v1) of the HTTP server, beside MCP: same tokens, same isolation."""

from emergent_memory.api.routes import API, ApiServices, api_routes, problem_response

__all__ = ["API", "ApiServices", "api_routes", "problem_response"]
