"""Start-up: the CLI's lazy command table matches its commands, and what `--help`,
`--version` and the stdio server (up to answering `initialize` and `tools/list`) import
leaves out the heavy layers (the Anthropic SDK, Alembic and SQLAlchemy, torch)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from emergent_memory.cli.common import COMMANDS, cli
from tests.helpers import INITIALIZE

# never imported until the path that needs them runs (capture with a key, migrations, the
# torch runtime); the database layers and the model runtime are not needed by --help either
NEVER_AT_START = ("anthropic", "alembic", "sqlalchemy", "torch", "sentence_transformers")
NOT_FOR_HELP = (*NEVER_AT_START, "psycopg", "psycopg_pool", "numpy", "httpx", "jsonschema")


# the child: run the command line given, then print which of the modules it imported
CHILD = """
import json, sys
watched = json.loads(sys.argv[1])
sys.argv = ["emergent-memory", *sys.argv[2:]]
from emergent_memory.entry import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in watched if m in sys.modules)))
"""


def imported_by(*arguments: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(NOT_FOR_HELP), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return imported


def test_the_command_table_is_the_commands_the_modules_define() -> None:
    """Every module's commands are in COMMANDS with their own one-line help, and nothing
    else is: a new command cannot be left out of `emergent-memory --help`."""
    for module in {module for module, _ in COMMANDS.values()}:
        import_module(f"emergent_memory.cli.{module}")
    defined = {name: command.get_short_help_str(10**6) for name, command in cli.commands.items()}
    assert {name: text for name, (_, text) in COMMANDS.items()} == defined
    modules = {name: command.callback.__module__ for name, command in cli.commands.items()}
    for name, (module, _) in COMMANDS.items():
        assert modules[name] == f"emergent_memory.cli.{module}", name


def test_every_command_answers_its_help() -> None:
    runner = CliRunner()
    context = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None, name
        shown = runner.invoke(cli, [name, "--help"])
        assert shown.exit_code == 0, (name, shown.output)
        assert f"Usage: cli {name}" in shown.output, name


def test_a_help_flag_given_as_an_option_value_still_runs_the_command_with_its_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "-h" here is --as-of's value, not a request for help: the command runs, with its
    # settings, and fails as it should (no database there), never as an internal error
    monkeypatch.setenv("EMERGENT_MEMORY_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/x")
    ran = CliRunner().invoke(cli, ["recall", "--as-of", "-h", "x"])
    assert ran.exit_code == 1, ran.output
    assert "could not connect to the database" in ran.output
    assert "internal error" not in ran.output


def test_help_and_version_import_no_heavy_layer() -> None:
    for arguments in (["--help"], ["--version"], ["serve", "--help"], ["recall", "--help"]):
        assert imported_by(*arguments) == [], arguments
    assert (
        "recall"
        in subprocess.run(
            [sys.executable, "-m", "emergent_memory", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )


# the child: what a recall builds before it opens the database (settings, the local model's
# provider, no LLM judge without a key), then which of the watched modules it imported
RECALL_CHILD = """
import json, sys
from emergent_memory.app import build_embedder, dedup_judge
from emergent_memory.settings import Settings
settings = Settings()
build_embedder(settings)
assert dedup_judge(settings) is None
print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))
"""


def test_a_recall_with_the_local_model_and_no_key_imports_no_http_or_llm_client() -> None:
    """httpx comes with the OpenAI-compatible provider and the LLM judge with a key: a recall
    on the local model without a key imports neither (about 0.2 s of a CLI recall)."""
    watched = ["httpx", "anthropic", "jsonschema", "emergent_memory.memory.dedup_judge"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
    done = subprocess.run(
        [sys.executable, "-c", RECALL_CHILD, json.dumps(watched)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


# the child: `serve --transport stdio` with the services' opening (the background thread
# that imports the application and starts the database) left out, so that what it imports
# is what answering initialize and tools/list takes; printed on stderr as it exits
STDIO_CHILD = """
import atexit, json, sys, threading
from emergent_memory.mcp.server import ServiceHolder

def not_opening(self, stack, open_service, open_verifier):
    thread = threading.Thread(target=lambda: None)
    thread.start()
    return thread

ServiceHolder.open_in_background = not_opening
watched = json.loads(sys.argv[1])
def report():
    imported = sorted(m for m in watched if m in sys.modules)
    print("IMPORTED " + json.dumps(imported), file=sys.stderr)
atexit.register(report)
sys.argv = ["emergent-memory", "serve", "--transport", "stdio", "--no-worker"]
from emergent_memory.entry import main
main()
"""


def test_the_stdio_server_answers_initialize_and_tools_list_without_the_heavy_layers() -> None:
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with subprocess.Popen(
        [sys.executable, "-c", STDIO_CHILD, json.dumps(NEVER_AT_START)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        assert server.stderr is not None
        answers = {}
        for message in messages:
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            while "id" in message and message["id"] not in answers:
                line = server.stdout.readline()
                assert line, "the server ended before answering"
                answer = json.loads(line)
                answers[answer.get("id")] = answer
        server.stdin.close()  # the server stops at the end of its input
        server.wait(timeout=60)
        stderr = server.stderr.read()
    assert answers[1]["result"]["serverInfo"]["name"] == "emergent-memory", stderr
    assert {tool["name"] for tool in answers[2]["result"]["tools"]} == {
        "save_memory",
        "recall_memories",
        "manage_memory",
        "verify_memory",
    }
    [imported] = [line for line in stderr.splitlines() if line.startswith("IMPORTED ")]
    assert json.loads(imported.removeprefix("IMPORTED ")) == []


# the child: `serve --transport stdio`, waiting long for the tool list before it opens
# anything (OPEN_WHEN_LISTED), so that the client's leaving comes first on any machine
LEAVING_CHILD = """
import sys
import emergent_memory.mcp.server as server
server.OPEN_WHEN_LISTED = 120.0
sys.argv = ["emergent-memory", "serve", "--transport", "stdio"]
from emergent_memory.entry import main
main()
"""


def test_a_client_that_leaves_before_the_tool_list_opens_nothing(tmp_path: Path) -> None:
    """A client that initializes and leaves: the server stops without opening its services
    (before, it opened them anyway once its wait for the tool list ran out, and the exit
    waited for them: against a database that never answers, until it gave up on them)."""
    with socket.socket() as silent_database:
        silent_database.bind(("127.0.0.1", 0))
        silent_database.listen()  # connections wait in the backlog: never an answer
        port = silent_database.getsockname()[1]
        env = {
            **os.environ,
            "EMERGENT_MEMORY_DATABASE_URL": f"postgresql://app@127.0.0.1:{port}/memory",
            "EMERGENT_MEMORY_DATA_DIR": str(tmp_path),
        }
        done = subprocess.run(
            [sys.executable, "-c", LEAVING_CHILD],
            input=json.dumps(INITIALIZE) + "\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == (
        "emergent-memory"
    )
    assert "still opening" not in done.stderr
    assert "could not start" not in done.stderr
