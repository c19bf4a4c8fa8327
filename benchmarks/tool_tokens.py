"""What the MCP tools cost the agent's context: the tool definitions a client sends the model,
and the answers of recall, list, verify and save as the model reads them.

Measured the way Claude Code 2.1.197 sends them (checked against its requests to a local
Messages API, tests/test_claude_code_cli.py): each tool as `name` (`mcp__<server>__<tool>`),
`description` and `input_schema`, no output schema; a tool's answer as its structured content
in compact JSON when it has some, else its text. The server runs in process (FastMCP's
in-memory client) on a fresh database, with the tests' bag-of-words embedder (the sizes do not
depend on the model).

Tokens are counted with the last tokenizer Anthropic published (`tokenizer.json`, shipped with
the anthropic SDK until 0.38; give it with `--tokenizer FILE`): an approximation, since the
current models' tokenizer is not public. Without it, characters / 3.5, said in the results.

    .venv/bin/python -m benchmarks.tool_tokens --tokenizer /path/to/tokenizer.json
    BENCH_TOKENIZER=/path/to/tokenizer.json .venv/bin/python -m benchmarks.run --only tools
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from fastmcp import Client

from benchmarks.common import bench_database, write_result
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryConfig, MemoryService
from tests.embedders import BagOfWordsEmbedder

SERVER = "emergent-memory"  # the name docs/clients.md gives the server
CHARACTERS_PER_TOKEN = 3.5  # the fallback without a tokenizer file
# Four memories like the (their contents total about 215 characters), all found by
# one query.
MEMORIES = (
    ("The user prefers pnpm over npm for every JavaScript project", "preference"),
    ("In the billing service, money amounts are integers in cents", "convention"),
    ("Run the test suite with make test, never pytest directly", "instruction"),
    ("The staging database is db-2; production is db-1 (both PostgreSQL 17)", "fact"),
)
QUERY = "pnpm billing cents test suite staging database"

Count = Callable[[str], int]


def counter(tokenizer: Path | None) -> tuple[Count, str]:
    """How text is counted, and how that is said in the results."""
    if tokenizer is None:
        print("warning: no --tokenizer: tokens are characters / 3.5", file=sys.stderr)
        return (lambda text: round(len(text) / CHARACTERS_PER_TOKEN)), "characters / 3.5"
    from tokenizers import Tokenizer

    loaded = Tokenizer.from_file(str(tokenizer))
    return (lambda text: len(loaded.encode(text).ids)), (
        "the last public Claude tokenizer (anthropic SDK <= 0.38): an approximation"
    )


def compact_json(value: Any) -> str:
    """JSON as Claude Code writes it (JSON.stringify: no spaces, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def as_sent(tool: Any) -> dict[str, Any]:
    return {
        "name": f"mcp__{SERVER}__{tool.name}",
        "description": tool.description or "",
        "input_schema": tool.input_schema,
    }


def as_read(result: Any) -> str:
    """A tool's answer as the model reads it in Claude Code."""
    if result.structured_content is not None:
        return compact_json(result.structured_content)
    return "".join(getattr(block, "text", "") for block in result.content)


async def measure(service: MemoryService, principal: Principal, count: Count) -> dict[str, Any]:
    server = create_server(lambda: nullcontext(service), lambda: principal)
    async with Client(server) as client:
        tools = [as_sent(tool) for tool in await client.list_tools()]
        definitions = {
            tool["name"].rsplit("__", 1)[1]: {
                "characters": len(compact_json(tool)),
                "tokens": count(compact_json(tool)),
            }
            for tool in tools
        }
        whole = compact_json(tools)
        for content, category in MEMORIES:
            saved = await client.call_tool(
                "save_memory", {"content": content, "category": category}
            )
        answers = {"save": as_read(saved)}
        recalled = await client.call_tool("recall_memories", {"query": QUERY})
        answers["recall"] = as_read(recalled)
        listed = await client.call_tool("manage_memory", {"action": "list"})
        answers["list"] = as_read(listed)
        empty = await client.call_tool("recall_memories", {"query": "xyzzy frobnicate"})
        answers["recall, nothing found"] = as_read(empty)
    contents = sum(count(content) for content, _ in MEMORIES)
    content_characters = sum(len(content) for content, _ in MEMORIES)
    per_memory = {}
    for name in ("recall", "list"):
        text = answers[name]
        found = sum(content in text for content, _ in MEMORIES)
        per_memory[name] = {
            "memories": found,
            "characters": len(text),
            "tokens": count(text),
            "overhead_tokens_per_memory": round((count(text) - contents) / max(found, 1), 1),
            "overhead_characters_per_memory": round(
                (len(text) - content_characters) / max(found, 1), 1
            ),
        }
    return {
        "tools": {
            "characters": len(whole),
            "tokens": count(whole),
            "per_tool": definitions,
        },
        "answers": {
            name: {"characters": len(text), "tokens": count(text), "text": text}
            for name, text in answers.items()
        },
        "per_memory": per_memory,
        "content": {"characters": content_characters, "tokens": contents},
    }


def run(tokenizer: Path | None = None, name: str = "tool_tokens") -> dict[str, Any]:
    """Measure, and write results/<name>.json and .md. `tokenizer`: the tokenizer.json to
    count with (else BENCH_TOKENIZER's, else characters / 3.5)."""
    if tokenizer is None and os.environ.get("BENCH_TOKENIZER"):
        tokenizer = Path(os.environ["BENCH_TOKENIZER"])
    count, counted = counter(tokenizer)
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=2)
        try:
            service = MemoryService(pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.95))
            principal = Principal(uuid.uuid4(), uuid.uuid4())
            result = asyncio.run(measure(service, principal, count))
        finally:
            pool.close()
    measured = {"counted_with": counted, **result}
    write_result(name, measured, markdown(measured))
    return measured


def markdown(result: dict[str, Any]) -> str:
    tools = result["tools"]
    lines = [
        f"Tokens counted with {result['counted_with']}.",
        "",
        "| what the model reads | characters | tokens |",
        "|---|---|---|",
        f"| all tool definitions | {tools['characters']:,} | {tools['tokens']:,} |",
    ]
    for name, size in tools["per_tool"].items():
        lines.append(f"| {name} | {size['characters']:,} | {size['tokens']:,} |")
    for name, size in result["answers"].items():
        lines.append(f"| {name} answer | {size['characters']:,} | {size['tokens']:,} |")
    lines += [
        "",
        "| answer | memories | overhead per memory, tokens | characters |",
        "|---|---|---|---|",
    ]
    for name, size in result["per_memory"].items():
        lines.append(
            f"| {name} | {size['memories']} | {size['overhead_tokens_per_memory']} | "
            f"{size['overhead_characters_per_memory']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", type=Path, help="the tokenizer.json to count with")
    parser.add_argument("--name", default="tool_tokens", help="the results' file name")
    args = parser.parse_args(argv)
    print(markdown(run(args.tokenizer, args.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
