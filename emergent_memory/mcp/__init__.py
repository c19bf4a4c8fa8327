"""The MCP layer: the FastMCP server, its identity sources and token authentication."""
