"""The pinned Claude Code CLI, run headless against the fake Messages API, still does what the
fixtures in tests/data/claude_code/ recorded: the hooks' input fields, the transcript's lines,
where a hook's additional context goes. The hooks' own unit tests rely on those fixtures. And it
calls the server's recall_memories and verify_memory tools when the model asks for them, with
the tool definitions and answers the budgets hold."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

from tests import claude_code
from tests.data.claude_code.record import (
    PREFERENCE,
    PROMPT_CONTEXT,
    START_CONTEXT,
    Recorder,
)
from tests.embedders import EmbeddingServer
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, text, tool_use
from tests.helpers import COMMAND, fake_embedder_env
from tests.test_tool_budget import ALL_TOOLS_CHARACTERS, TOOL_NAMES, compact_json, tools_as_sent

FIXTURES = Path(__file__).parent / "data" / "claude_code"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def shape(line: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """What a transcript line is: its type, its attachment's type, its message's role."""
    return line["type"], line.get("attachment", {}).get("type"), line.get("message", {}).get("role")


def test_the_pinned_version_is_installed() -> None:
    claude = claude_code.claude_executable()
    said = subprocess.run(
        [str(claude), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert said.stdout.strip() == f"{claude_code.VERSION} (Claude Code)"


def test_a_session_matches_the_recorded_fixtures(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    contexts = {"SessionStart": START_CONTEXT, "UserPromptSubmit": PROMPT_CONTEXT}
    with FakeAnthropic(default=text("Understood: pnpm, never npm, in this repo.")) as fake:
        session = recorder.session(fake, PREFERENCE, contexts=contexts)
        [request] = fake.message_requests

    assert session.result == "Understood: pnpm, never npm, in this repo."
    calls = recorder.hook_calls()
    recorded = fixture("preference.hooks.json")
    assert [(c["event"], sorted(c["input"])) for c in calls] == [
        (c["event"], sorted(c["input"])) for c in recorded
    ]
    start, prompt, stop, end = (call["input"] for call in calls)
    assert {c["session_id"] for c in (start, prompt, stop, end)} == {session.session_id}
    assert start["source"] == "startup"
    assert prompt["prompt"] == PREFERENCE
    assert stop["last_assistant_message"] == session.result
    assert end["reason"] == "other"
    assert Path(start["transcript_path"]) == session.transcript_path
    assert start["cwd"] == str(recorder.project.resolve())

    lines = session.transcript()
    assert [shape(line) for line in lines] == [
        shape(json.loads(line)) for line in (FIXTURES / "preference.jsonl").read_text().splitlines()
    ]
    injected = [
        line["attachment"]
        for line in lines
        if line.get("attachment", {}).get("type") == "hook_additional_context"
    ]
    assert [(a["hookEvent"], a["content"]) for a in injected] == [
        ("SessionStart", [START_CONTEXT]),
        ("UserPromptSubmit", [PROMPT_CONTEXT]),
    ]

    [system] = [m["content"] for m in request.json["messages"] if m["role"] == "system"]
    assert f"SessionStart hook additional context: {START_CONTEXT}" in system
    assert system.endswith(f"UserPromptSubmit hook additional context: {PROMPT_CONTEXT}")


SERVER_TOOLS = "mcp__emergent-memory__"  # Claude Code's prefix of the server's tools
RECALL_TOOL = SERVER_TOOLS + "recall_memories"
VERIFY_TOOL = SERVER_TOOLS + "verify_memory"
CLAIM = "The staging database is db-2"


def tool_results(request: RecordedRequest) -> list[str]:
    """The texts of the tool results the session sent the model in this request."""
    found = []
    for turn in request.json["messages"]:
        content = turn["content"] if isinstance(turn["content"], list) else []
        for block in content:
            if block.get("type") == "tool_result":
                inner = block["content"]
                texts = [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner]
                found.append("".join(texts))
    return found


def test_a_session_recalls_and_verifies_on_the_real_server(
    tmp_path: Path, database_url: str, embedding_server: EmbeddingServer
) -> None:
    """The model asks recall_memories, then verify_memory (MCP tools of `emergent-memory
    serve` over stdio, as docs/clients.md configures it); Claude Code calls them and sends the
    model their answers. What it sent the model is what the budgets hold
    (tests/test_tool_budget.py): the tools' definitions, and each answer as the compact text
    (Claude Code sends a tool's structured content, which without detail is that text)."""
    env = fake_embedder_env(
        embedding_server,
        EMERGENT_MEMORY_DATABASE_URL=database_url,
        EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
        EMERGENT_MEMORY_PROJECT_ID=str(uuid.uuid4()),
    )
    saved = subprocess.run(
        [*COMMAND, "save", CLAIM, "-c", "fact", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    memory_id = json.loads(saved.stdout)["memory"]["id"]
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    server = {"command": COMMAND[0], "args": [*COMMAND[1:], "serve", "--transport", "stdio"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"emergent-memory": server | {"env": env}}}))

    def answer(request: RecordedRequest) -> Reply | None:
        if VERIFY_TOOL not in request.tool_names:
            return None  # not the conversation (e.g. a title): the default answer
        done = tool_results(request)
        if not done:
            return tool_use(RECALL_TOOL, {"query": "staging database"})
        if len(done) == 1:
            return tool_use(VERIFY_TOOL, {"claim": CLAIM})
        return text("Memory confirms it: db-2.")

    with FakeAnthropic(handler=answer, default=text("ok")) as fake:
        session = claude_code.run_session(
            claude_code.claude_executable(),
            "Is the staging database still db-2?",
            home=home,
            project=project,
            base_url=fake.url,
            args=(
                "--mcp-config",
                str(config),
                "--strict-mcp-config",
                "--allowedTools",
                f"{RECALL_TOOL},{VERIFY_TOOL}",
            ),
            # wait for the server before the first request (by default a headless session
            # connects in the background, and waits 5 s at most when told to wait): else the
            # first request can go out without the server's tools
            env={"MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": "60000"},
            timeout=180,
        )
        conversation = [r for r in fake.message_requests if VERIFY_TOOL in r.tool_names]
        first = next(r for r in fake.message_requests if r.tool_names)

    assert session.returncode == 0, session.stderr
    assert first is conversation[0]  # the tool was there from the session's first request
    assert session.result == "Memory confirms it: db-2."
    # the tools as the model got them: within the budget, and what tools/list says
    sent = [t for t in conversation[0].json["tools"] if t["name"].startswith(SERVER_TOOLS)]
    assert sorted(t["name"].removeprefix(SERVER_TOOLS) for t in sent) == sorted(TOOL_NAMES)
    assert all(set(t) == {"name", "description", "input_schema"} for t in sent)
    assert len(compact_json(sent)) <= ALL_TOOLS_CHARACTERS
    listed = sorted(asyncio.run(tools_as_sent()), key=lambda tool: tool["name"])
    assert sorted(sent, key=lambda tool: tool["name"]) == listed  # keys in another order
    recalled, verified = (json.loads(result) for result in tool_results(conversation[-1]))
    # each answer as the model read it: the compact text alone, one line per memory
    short = memory_id.replace("-", "")[:8]
    assert recalled == {"text": f"[{short}] fact, now: {CLAIM}"}
    assert list(verified) == ["text"]
    confirmed, match = verified["text"].splitlines()
    assert confirmed.startswith("confirmed: ")
    assert match.startswith(f"[{short}] confirms 1.00, fact, now: {CLAIM} (")


MEMORY_TOOLS = {
    f"mcp__emergent-memory__{name}"
    for name in ("save_memory", "recall_memories", "manage_memory", "verify_memory")
}


def test_the_memory_tools_are_in_the_first_request_whatever_the_database_is_doing(
    tmp_path: Path, embedding_server: EmbeddingServer
) -> None:
    """Claude Code starts `emergent-memory serve --transport stdio` itself and waits for it
    (as an interactive session does; headless: MCP_CONNECTION_NONBLOCKING=false) within its
    default 30 s connection timeout, on a database that takes the connection and never
    answers (a server still starting, on a busy machine): the server answers initialize and
    tools/list before it opens the database, so the session's first request to the model
    offers the memory tools (a server that opened its database first never connected)."""
    with socket.socket() as silent_database:
        silent_database.bind(("127.0.0.1", 0))
        silent_database.listen()  # connections wait in the backlog: never an answer
        port = silent_database.getsockname()[1]
        env = fake_embedder_env(
            embedding_server,
            EMERGENT_MEMORY_DATABASE_URL=f"postgresql://app@127.0.0.1:{port}/memory",
            EMERGENT_MEMORY_ACTOR_ID=str(uuid.uuid4()),
            EMERGENT_MEMORY_PROJECT_ID=str(uuid.uuid4()),
        )
        home, project = tmp_path / "home", tmp_path / "project"
        project.mkdir(parents=True)
        home.mkdir()
        server = {"command": COMMAND[0], "args": [*COMMAND[1:], "serve", "--transport", "stdio"]}
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"emergent-memory": server | {"env": env}}}))
        with FakeAnthropic(default=text("Hello.")) as fake:
            session = claude_code.run_session(
                claude_code.claude_executable(),
                "Hello, what can you do?",
                home=home,
                project=project,
                base_url=fake.url,
                args=("--mcp-config", str(config), "--strict-mcp-config"),
                env={"MCP_CONNECTION_NONBLOCKING": "false"},
                timeout=180,
            )
            # the conversation's requests offer tools (Claude Code's own at least); a title or
            # other side request offers none
            conversation = [r for r in fake.message_requests if r.tool_names]
    assert session.returncode == 0, session.stderr
    assert conversation, [r.json.get("model") for r in fake.message_requests]
    assert set(conversation[0].tool_names) >= MEMORY_TOOLS, conversation[0].tool_names
