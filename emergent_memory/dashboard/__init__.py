"""The web dashboard at /ui: server-rendered pages to search, browse, correct and audit what
agents remember, on the same HTTP app, tokens and row-level security as MCP."""

from emergent_memory.dashboard.importing import UPLOADS
from emergent_memory.dashboard.routes import dashboard_routes
from emergent_memory.dashboard.site import DashboardServices
from emergent_memory.dashboard.web import UI

__all__ = ["UI", "UPLOADS", "DashboardServices", "dashboard_routes"]
