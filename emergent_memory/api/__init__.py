"""The REST API (/api/v1) of the HTTP server, beside MCP: same tokens, same isolation."""

from emergent_memory.api.common import API, problem_response
from emergent_memory.api.routes import ApiServices, api_endpoints, api_routes

__all__ = ["API", "ApiServices", "api_endpoints", "api_routes", "problem_response"]
