"""Rules of the project that a change could silently break: layers, docs, deployment files."""

from __future__ import annotations

import ast
import asyncio
import json
import re
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from click import Context, Group

from emergent_memory.cli import cli
from emergent_memory.mcp.arguments import OPTIONS
from emergent_memory.mcp.guidelines import MEMORY_GUIDELINES
from emergent_memory.settings import NON_SETTING_VARIABLES, setting_variables
from tests.test_tool_budget import tools_as_sent

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "emergent_memory"
README = (ROOT / "README.md").read_text()


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


LAYERS_ABOVE = {
    # a layer never imports the layers above it (DESIGN.md 2)
    "graph": (
        "emergent_memory.cli",
        "emergent_memory.mcp",
        "emergent_memory.memory",
        "emergent_memory.embeddings",
        "emergent_memory.app",
    ),
    "embeddings": (
        "emergent_memory.cli",
        "emergent_memory.mcp",
        "emergent_memory.memory",
        "emergent_memory.app",
    ),
    "memory": ("emergent_memory.cli", "emergent_memory.mcp", "emergent_memory.app"),
}


@pytest.mark.parametrize("layer", sorted(LAYERS_ABOVE))
def test_layers_do_not_depend_on_the_layers_above(layer: str) -> None:
    files = list((PACKAGE / layer).glob("*.py"))
    assert files
    for path in files:
        offending = {name for name in imports_of(path) if name.startswith(LAYERS_ABOVE[layer])}
        assert offending == set(), f"{layer}/{path.name} imports {offending}"


# The memory layer's words: its object type and the property whose text gets a vector.
MEMORY_KNOWLEDGE = re.compile(r"""["']Memory["']|["']content["']""")


@pytest.mark.parametrize("layer", ["graph", "embeddings"])
def test_graph_and_embeddings_do_not_know_what_a_memory_is(layer: str) -> None:
    """What to embed comes from the composition root (memory.store.EMBEDDED_TEXT), not from
    knowing the agent-memory pack (DESIGN.md 2)."""
    for path in (PACKAGE / layer).glob("*.py"):
        found = MEMORY_KNOWLEDGE.findall(path.read_text())
        assert found == [], f"{layer}/{path.name} names {found}"


def test_embeddings_write_vectors_under_the_graphs_own_lock() -> None:
    """The worker takes the graph's version lock (graph.lock_object, graph.set_embedding)
    instead of re-typing its name, and writes no graph rows itself."""
    for path in (PACKAGE / "embeddings").glob("*.py"):
        source = path.read_text()
        for own_lock in ("kb.graph_objects:", "pg_advisory", "hashtext", "lock_versions"):
            assert own_lock not in source, f"embeddings/{path.name} locks with {own_lock!r}"
        assert not re.search(r"UPDATE\s+kb\.graph_objects", source), path.name
    worker = (PACKAGE / "embeddings" / "worker.py").read_text()
    assert "kb.graph_objects" not in worker
    assert "set_embedding(" in worker


def test_every_module_says_what_it_is_for() -> None:
    for path in PACKAGE.rglob("*.py"):
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring, f"{path.relative_to(ROOT)} has no module docstring"


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    for variable in setting_variables():
        assert f"| `{variable}` |" in README, f"{variable} is not documented in README.md"
    for variable in NON_SETTING_VARIABLES:
        assert variable in README


def test_every_cli_command_is_in_the_readme() -> None:
    def commands(group: Group, prefix: str) -> list[str]:
        found = []
        context = Context(group)
        for name in group.list_commands(context):  # the CLI loads its commands lazily
            command = group.get_command(context, name)
            assert command is not None, name
            if isinstance(command, Group):
                found += commands(command, f"{prefix}{name} ")
            else:
                found.append(f"{prefix}{name}")
        return found

    listed = commands(cli, "emergent-memory ")
    assert "emergent-memory db psql" in listed
    for command in listed:
        assert f"`{command}" in README, f"{command} is not documented in README.md"


def test_every_tool_and_the_prompt_are_documented() -> None:
    clients = (ROOT / "docs" / "clients.md").read_text()
    memory = (ROOT / "docs" / "memory.md").read_text()
    for name in ("save_memory", "recall_memories", "manage_memory", "verify_memory"):
        assert f"`{name}(" in README
        assert f"`{name}`" in clients
        assert f"## {name}" in memory
    assert "memory_guidelines" in README
    assert "memory_guidelines" in clients


def test_every_tool_argument_and_option_is_documented() -> None:
    """Each tool's arguments in the README's signature of it and in docs/clients.md; each
    field of its options in both, and in the memory_guidelines prompt."""
    clients = (ROOT / "docs" / "clients.md").read_text()
    tools = asyncio.run(tools_as_sent())
    for tool in tools:
        name = tool["name"].rsplit("__", 1)[1]
        [signature] = re.findall(rf"`{name}\(([^)]*)\)`", README)
        [row] = [line for line in clients.splitlines() if line.startswith(f"| `{name}` |")]
        for argument in tool["input_schema"]["properties"]:
            assert argument in signature.replace("?", "").split(", "), (name, argument)
            assert f"`{argument}`" in row, (name, argument)
    for name, options in OPTIONS.items():
        [row] = [line for line in clients.splitlines() if line.startswith(f"| `{name}` |")]
        for field in options.model_fields:
            assert f"`{field}`" in row, (name, field)
            assert f"`{field}`" in README, (name, field)
            assert field in MEMORY_GUIDELINES, (name, field)


def test_the_client_configuration_snippets_are_valid_json() -> None:
    blocks = code_blocks(ROOT / "docs" / "clients.md", "json")
    assert len(blocks) >= 5
    for block in blocks:
        config = json.loads(block)
        assert "emergent-memory" in json.dumps(config)


def test_the_readme_quick_start_has_the_two_commands_ci_runs() -> None:
    assert "make run" in README
    assert "make test" in README
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")


def test_docker_compose_defines_database_migration_and_server() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    server = services["server"]
    assert server["command"][:3] == ["serve", "--transport", "http"]
    roles = services["roles"]
    assert roles["command"][:3] == ["db", "create-role", "emergent_server"]
    assert roles["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert server["depends_on"]["roles"]["condition"] == "service_completed_successfully"
    # the server connects as the application role (row-level security), not as the owner
    server_url = server["environment"]["EMERGENT_MEMORY_DATABASE_URL"]
    assert server_url.startswith("postgresql://emergent_server:${SERVER_DB_PASSWORD:?")
    assert "healthcheck" in server
    assert all(port.startswith("127.0.0.1:") for port in server["ports"])
    text = (ROOT / "docker-compose.yml").read_text()
    assert "POSTGRES_PASSWORD:?" in text  # required from the environment, never a default
    for service in ("migrate", "roles"):
        url = services[service]["environment"]["EMERGENT_MEMORY_DATABASE_URL"]
        assert "${POSTGRES_PASSWORD" in url


def code_blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_the_python_example_in_the_graph_docs_runs(database_url: str) -> None:
    blocks = code_blocks(ROOT / "docs" / "graph.md", "python")
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/graph.md", "exec"), {"DATABASE_URL": database_url})


def test_the_python_example_in_the_memory_docs_runs(
    database_url: str, monkeypatch: pytest.MonkeyPatch, local_embedder: object
) -> None:
    monkeypatch.setenv("EMERGENT_MEMORY_DATABASE_URL", database_url)
    [block] = code_blocks(ROOT / "docs" / "memory.md", "python")
    namespace: dict[str, Any] = {"ACTOR_ID": uuid.uuid4(), "PROJECT_ID": uuid.uuid4()}
    exec(compile(block, "docs/memory.md", "exec"), namespace)
    assert namespace["hits"][0]["content"] == "The user prefers pnpm over npm"
    assert namespace["answer"]["verdict"] == "confirmed"


def test_the_sql_examples_in_the_graph_docs_run(database_url: str) -> None:
    blocks = code_blocks(ROOT / "docs" / "graph.md", "sql")
    assert blocks
    with psycopg.connect(database_url) as conn:
        for block in blocks:
            statements = [s for s in block.split(";") if s.strip() and not _only_comments(s)]
            for statement in statements:
                rows: list[Any] = conn.execute(statement.encode()).fetchall()
                assert isinstance(rows, list)
        history = conn.execute(
            "SELECT count(*) FROM kb.graph_objects WHERE canonical_id = %s", (uuid.UUID(int=0),)
        ).fetchone()
        assert history == (0,)


def _only_comments(statement: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in statement.splitlines())
