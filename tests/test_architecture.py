"""The architecture holds: each layer imports only the layers below it (DESIGN.md 2), the
edges reach the database only through services that app.py builds, and docs/architecture.md
names every module of the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "emergent_memory"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, as `a.b` for `from a import b` too (so that importing a
    module through its package counts)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def files_of(part: str) -> list[Path]:
    path = PACKAGE / part
    return sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]


def _in(name: str, modules: tuple[str, ...]) -> bool:
    return any(name == module or name.startswith(module + ".") for module in modules)


P = "emergent_memory."
# What each part of the package must not import: the parts above it, and for the edges
# (cli, mcp) what only services may use. Each entry is a rule the issue named.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "db": tuple(
        P + m for m in ("graph", "memory", "embeddings", "auth", "transfer", "app", "cli", "mcp")
    ),
    "graph": (
        *(P + m for m in ("memory", "embeddings", "auth", "transfer", "app", "cli", "mcp")),
        *(P + m for m in ("db.migrate", "migrations")),
    ),
    "embeddings": tuple(P + m for m in ("memory", "auth", "transfer", "app", "cli", "mcp")),
    "auth": tuple(
        P + m for m in ("memory", "graph", "embeddings", "transfer", "app", "cli", "mcp")
    ),
    "transfer": tuple(P + m for m in ("memory", "app", "cli", "mcp")),
    "memory": tuple(P + m for m in ("app", "cli", "mcp")),
    "app": tuple(P + m for m in ("cli", "mcp")),
    "cli": (
        *(P + m for m in ("graph", "embeddings.jobs", "embeddings.worker", "transfer")),
        *(P + m for m in ("auth.tokens", "memory.store", "db.pool", "db.connection.connect")),
        "psycopg",
        "psycopg_pool",
        "pgvector",
    ),
    "mcp": (
        *(P + m for m in ("graph", "db", "embeddings", "transfer", "auth.tokens", "memory.store")),
        *(P + m for m in ("cli", "app", "api", "dashboard")),
        "psycopg",
        "psycopg_pool",
        "pgvector",
    ),
    "api": (
        *(P + m for m in ("graph", "db", "embeddings", "llm", "transfer", "auth.tokens")),
        *(P + m for m in ("memory.store", "memory.browse_store", "memory.sessions")),
        *(P + m for m in ("cli", "app", "mcp", "dashboard")),
        "psycopg",
        "psycopg_pool",
        "pgvector",
    ),
    # the dashboard is an edge like the REST API: services only, through the same scopes
    "dashboard": (
        *(P + m for m in ("graph", "db", "embeddings", "llm", "transfer", "auth.tokens")),
        *(P + m for m in ("memory.store", "memory.browse_store", "memory.sessions")),
        *(P + m for m in ("cli", "app", "mcp", "api")),
        "psycopg",
        "psycopg_pool",
        "pgvector",
    ),
    # the marker rule: shared by the server and the hooks, which import it on every prompt
    "markers": ("emergent_memory",),
    # telemetry: every layer measures through it, so it imports none of them (issue 17)
    "telemetry": tuple(
        P + m
        for m in (*("db", "graph", "memory", "embeddings", "auth", "transfer", "llm"), "settings")
    ),
    "otel": tuple(
        P + m
        for m in (*("db", "graph", "memory", "embeddings", "auth", "transfer", "llm"), "settings")
    ),
}
# and nothing below the edges imports the two web edges (issue 16)
for _part in (
    "db",
    "graph",
    "embeddings",
    "auth",
    "transfer",
    "memory",
    "app",
    "telemetry",
    "otel",
):
    FORBIDDEN[_part] += (P + "api", P + "dashboard")


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(part: str) -> None:
    files = files_of(part)
    assert files
    assert all(path.exists() for path in files)
    for path in files:
        offending = sorted(name for name in imports_of(path) if _in(name, FORBIDDEN[part]))
        assert offending == [], f"{path.relative_to(PACKAGE)} imports {offending}"


@pytest.mark.parametrize(
    ("source", "part"),
    [
        # the imports issue 14 found, each of which the rules above must refuse
        ("from emergent_memory import migrations", "graph"),
        ("from emergent_memory.db.migrate import current_revision", "graph"),
        ("from emergent_memory.memory.models import Principal", "auth"),
        ("from emergent_memory.memory import Principal", "auth"),
        ("from emergent_memory import graph", "cli"),
        ("from emergent_memory.embeddings import jobs", "cli"),
        ("from emergent_memory import transfer", "cli"),
        ("from emergent_memory.auth import tokens", "cli"),
        ("from pgvector.psycopg import register_vector", "cli"),
        (
            "from emergent_memory.graph.models import GraphObject\nimport emergent_memory.memory",
            "embeddings",
        ),
        ("from emergent_memory.db.pool import DatabasePool", "mcp"),
        ("from emergent_memory.db.connection import connect", "cli"),
        ("from psycopg_pool import ConnectionPool", "cli"),
        ("from emergent_memory.auth import tokens", "mcp"),
        # the dashboard and the REST API are edges (issue 16)
        ("from emergent_memory.memory import browse_store", "dashboard"),
        ("from emergent_memory.api import common", "dashboard"),
        ("from emergent_memory.db.pool import transaction", "dashboard"),
        ("from emergent_memory.memory.browse_store import list_page", "api"),
        # markers.py imports nothing of the package (issue 15's review)
        ("from emergent_memory.memory.validation import storable", "markers"),
        ("from emergent_memory import errors", "markers"),
        ("import emergent_memory.settings", "markers"),
        # telemetry is below every layer that uses it (issue 17)
        ("from emergent_memory.memory.models import Category", "telemetry"),
        ("from emergent_memory.db.pool import DatabasePool", "telemetry"),
    ],
)
def test_the_rules_refuse_the_imports_that_broke_the_layers(
    source: str, part: str, tmp_path: Path
) -> None:
    path = tmp_path / "module.py"
    path.write_text(source + "\n")
    assert any(_in(name, FORBIDDEN[part]) for name in imports_of(path)), source


# Holding the pool or a connection, or running a statement (psycopg's logger name aside).
DATABASE_USE = re.compile(
    r"(?<!psycopg)\.pool\b|\.connection\(|\btransaction\(|\.execute\(|\bconnect\("
)


@pytest.mark.parametrize(
    "source",
    [
        "with connect(url) as conn:",
        "conn.execute('select 1')",
        "with service.pool.connection() as conn:",
        "with pool.connection(timeout=2) as conn:",
        "with transaction(pool) as conn:",
    ],
)
def test_the_edge_rule_sees_database_use(source: str) -> None:
    assert DATABASE_USE.search(source)


def test_the_edges_contain_no_sql_and_no_pool() -> None:
    """CLI commands and MCP tools call services; they never hold a connection or the pool."""
    for path in files_of("cli") + files_of("mcp") + files_of("api") + files_of("dashboard"):
        source = path.read_text()
        assert not re.search(r"\b(SELECT|INSERT|UPDATE|DELETE)\b", source), path.name
        database_use = (
            r"(?<!psycopg)\.pool\b|\.connection\(|\btransaction\(|\.execute\(|\bconnect\("
        )
        assert not re.search(database_use, source), path.name


def modules_in_the_tree() -> set[str]:
    return {
        str(path.relative_to(PACKAGE)).removesuffix(".py")
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    }


def modules_in_the_doc() -> set[str]:
    """The modules docs/architecture.md names in its layout: `package/module.py` or, in a
    package's line, `package/ module, module`."""
    text = ARCHITECTURE.read_text()
    layout = text.split("<!-- layout -->")[1]
    named: set[str] = set()
    for line in layout.splitlines():
        match = re.match(r"\s*(?:(\w+)/)?\s+((?:\w+\.py[ ,]*)+)", line)
        if match:
            folder = f"{match.group(1)}/" if match.group(1) else ""
            named.update(
                folder + name.removesuffix(".py") for name in re.findall(r"\w+\.py", match.group(2))
            )
    return named


def test_the_architecture_doc_names_every_module_and_only_those() -> None:
    assert modules_in_the_doc() == modules_in_the_tree()


def test_no_module_is_over_400_lines_unless_the_doc_says_why() -> None:
    text = ARCHITECTURE.read_text()
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        module = str(path.relative_to(PACKAGE))
        if lines > 400:
            assert f"`{module}`" in text.split("## Long modules")[1], f"{module}: {lines} lines"
