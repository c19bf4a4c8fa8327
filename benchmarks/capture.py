"""Capture throughput: conversation windows per second through the capture worker.

The worker is the product's (emergent_memory/memory/capture_worker.py) with the configuration
emergent_memory/app.py builds (default window of 16 turns, overlap 4, tool output cut at 1,500
characters; the memory service with the shipped dedup policy and the real local model), on a
database of its own. Its LLM is a local fake of the Messages API (tests/fake_anthropic.py)
driven through the real `anthropic` SDK, answering at once: the gate says yes to the windows
in which the user asked for something to be remembered (one window in four) and no to the
rest, and the extractor then proposes that statement as a memory (explicit, with the user's
turn as its evidence), which is reviewed and saved as a tool call would save it.

Each session is SESSION_TURNS turns (user, assistant, a long tool result, assistant, ...),
received through CaptureService.enqueue in one request (final), which queues its windows;
then one worker drains the queue. Reported: windows per second, and where the worker's time
goes per stage (timed by wrapping the worker's calls; the wrappers call the real functions).

Baseline in the same run and database (another actor, the same texts): the same windows with
the gate always saying no, so no window reaches the extractor. A warm-up of one session comes
first and is not counted.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import SecretStr

from benchmarks import generate, quality
from benchmarks.common import bench_database, write_result
from emergent_memory.app import build_llm, capture_config, memory_config
from emergent_memory.auth.principal import READ, WRITE, Principal
from emergent_memory.db.pool import create_pool
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.memory import MemoryService, capture_store, capture_worker
from emergent_memory.memory.capture import CapturedMessage, CaptureService
from emergent_memory.memory.capture_worker import CaptureWorker
from emergent_memory.settings import Settings
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, tool_use

SESSION_TURNS = 48  # three windows of 16
REMEMBER = "Please remember: "
# where, in a window whose gate says yes, the user asks (not in the last `overlap` turns, which
# the next window reads as context)
ASK_AT = 5
YES_EVERY = 4  # one window in four has something worth remembering
BEGIN_COMMIT = "begin, act as the owner, commit"
_ASKED = re.compile(r"^\[(\d+)\] user: " + re.escape(REMEMBER) + r"(.+)$", re.MULTILINE)


def tool_output(seed: int) -> str:
    """A long command output (a test run's log), cut by capture to its head and tail."""
    lines = [
        f"tests/test_module_{(seed + n) % 37}.py::test_case_{n} PASSED [{n % 100:3d}%]"
        for n in range(90)
    ]
    return "\n".join(lines)


def sessions(count: int, statements: list[tuple[str, str]]) -> list[list[CapturedMessage]]:
    """`count` sessions of SESSION_TURNS turns; in every YES_EVERY-th window the user asks for
    one of `statements` (content, category) to be remembered."""
    chatter = [m.content for m in generate.memories(count * SESSION_TURNS, 10, seed=11)]
    built, window_number, asked = [], 0, 0
    for s in range(count):
        turns: list[CapturedMessage] = []
        for t in range(SESSION_TURNS):
            position = t % 16
            if position == 0 and t:
                window_number += 1
            text = chatter[(s * SESSION_TURNS + t) % len(chatter)]
            if position == ASK_AT and window_number % YES_EVERY == 0:
                content, _ = statements[asked % len(statements)]
                asked += 1
                turns.append(CapturedMessage("user", REMEMBER + content))
            elif t % 4 == 0:
                turns.append(CapturedMessage("user", f"Can you check this: {text}"))
            elif t % 4 == 2:
                turns.append(CapturedMessage("tool", tool_output(s + t)))
            else:
                turns.append(CapturedMessage("assistant", f"Done. I looked at it: {text}"))
        window_number += 1
        built.append(turns)
    return built


def the_window(text: str) -> str:
    """The part of a model's prompt that is the window (after its context turns)."""
    return text.split("(the window)", 1)[-1]


def fake_llm(gate_says_yes: bool, categories: dict[str, str]) -> Any:
    """The fake Messages API, scripted as the module docstring says (its replies go out with
    TCP_NODELAY, so no call waits about 40 ms for the client's delayed acknowledgement)."""

    def answer(request: RecordedRequest) -> Reply | None:
        asked = _ASKED.findall(the_window(request.text))
        if request.forced_tool == "record_gate_decision":
            worth = gate_says_yes and bool(asked)
            return tool_use(
                "record_gate_decision",
                {"worth_remembering": worth, "reason": "a stated fact" if worth else "chatter"},
            )
        if request.forced_tool == "record_memories":
            proposals = [
                {
                    "content": content.strip(),
                    "category": categories.get(content.strip(), "fact"),
                    "scope": "project",
                    "source": "explicit",
                    "confidence": 0.9,
                    "action": "add",
                    "target": None,
                    "reason": "the user asked for it to be remembered",
                    "evidence_turns": [int(index)],
                }
                for index, content in asked
            ]
            return tool_use(
                "record_memories", {"summary": "The user stated a fact.", "memories": proposals}
            )
        return None

    return FakeAnthropic(handler=answer)


@contextmanager
def stage_timer(capture: CaptureService) -> Iterator[dict[str, float]]:
    """Seconds spent per stage of the worker, by wrapping what it calls (the real functions)."""
    spent: dict[str, float] = defaultdict(float)

    def timed(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - start

        return wrapper

    extractor = capture.extractor
    patches: list[tuple[Any, str, str]] = [
        (capture_store, "cut_idle", "cut idle sessions"),
        (capture_store, "claim", "claim windows"),
        (capture_store, "read_turns", "read turns"),
        (capture_store, "spent_today", "read the day's tokens"),
        (capture_store, "find_episode", "look for the episode"),
        (extractor, "gate", "gate (LLM call)"),
        (capture, "close_memories", "close memories (embed, recall)"),
        (extractor, "extract", "extractor (LLM call)"),
        (capture_store, "record_call", "record the LLM call"),
        (capture_worker, "review", "review proposals"),
        (capture_worker, "keep_episode", "keep the episode"),
        (capture_worker, "save_decisions", "save memories"),
        (capture_store, "finish", "finish the window"),
    ]
    patched = []
    for owner, name, stage in patches:
        own = name in vars(owner)  # a module's function; else an instance's method
        patched.append((owner, name, getattr(owner, name), own))
        setattr(owner, name, timed(stage, getattr(owner, name)))
    try:
        yield spent
    finally:
        for owner, name, original, own in reversed(patched):
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)


def phase(
    capture: CaptureService, actor: uuid.UUID, built: list[list[CapturedMessage]]
) -> dict[str, Any]:
    """Enqueue the sessions as `actor`, then drain the queue with one worker, timed."""
    principal = Principal(actor, quality.ident("project", "capture"), frozenset({READ, WRITE}))
    start = time.perf_counter()
    windows = 0
    for turns in built:
        receipt = capture.enqueue(
            principal,
            session_id=f"session-{uuid.uuid4()}",
            client="benchmark",
            messages=turns,
            first_index=0,
            final=True,
        )
        windows += receipt["windows_queued"]
    enqueue_seconds = time.perf_counter() - start
    worker = CaptureWorker(capture)
    acting_as = worker._acting_as
    transactions = 0
    with stage_timer(capture) as spent:

        @contextmanager
        def timed_transaction(owner: Principal) -> Iterator[Any]:
            """The worker's transaction as the owner, its begin and commit timed."""
            nonlocal transactions
            transactions += 1
            begin, inside = time.perf_counter(), 0.0
            with acting_as(owner) as conn:
                entered = time.perf_counter()
                try:
                    yield conn
                finally:
                    inside = time.perf_counter() - entered
            spent[BEGIN_COMMIT] += time.perf_counter() - begin - inside

        worker._acting_as = timed_transaction  # type: ignore[method-assign, assignment]
        start = time.perf_counter()
        counts = worker.drain()
        seconds = time.perf_counter() - start
    del worker._acting_as
    stages = {stage: round(value * 1000 / max(windows, 1), 2) for stage, value in spent.items()}
    stages["other"] = round(seconds * 1000 / max(windows, 1) - sum(stages.values()), 2)
    return {
        "sessions": len(built),
        "turns": sum(len(turns) for turns in built),
        "windows": windows,
        "enqueue_seconds": round(enqueue_seconds, 3),
        "turns_per_second_received": round(sum(map(len, built)) / enqueue_seconds, 1),
        "drain_seconds": round(seconds, 3),
        "windows_per_second": round(windows / seconds, 2) if seconds else 0.0,
        "ms_per_window_by_stage": dict(sorted(stages.items(), key=lambda item: -item[1])),
        "owner_transactions_per_window": round(transactions / max(windows, 1), 2),
        "counts": counts.as_dict(),
    }


def run(sessions_count: int = 60) -> dict[str, Any]:
    data = quality.DevSet()
    statements = [
        (m["content"], m["category"])
        for m in data.memories
        if not m.get("superseded_by") and m["scope"] != "global"
    ]
    categories = dict(statements)
    built = sessions(sessions_count, statements)
    embedder = LocalEmbeddings()
    embedder.load()
    result: dict[str, Any] = {
        "session_turns": SESSION_TURNS,
        "yes_every": YES_EVERY,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    with bench_database() as url:
        pool = create_pool(url, min_size=1, max_size=4)
        try:
            # the first phase would pay for first uses (connections, the SDK's client, the
            # model's first runs): a warm-up of one session with the mix, not counted
            phases = [
                ("warm-up", True, built[:1]),
                ("gate always no (baseline)", False, built),
                ("gate yes/no mix", True, built),
            ]
            for name, yes, these in phases:
                with fake_llm(yes, categories) as llm:
                    settings = Settings(
                        anthropic_api_key=SecretStr("benchmark"), anthropic_base_url=llm.url
                    )
                    memory = MemoryService(
                        pool, embedder, memory_config(settings, embedder.model_name)
                    )
                    capture = CaptureService(memory, build_llm(settings), capture_config(settings))
                    measured = phase(capture, quality.ident("user", name), these)
                    if name != "warm-up":
                        result[name] = measured | {"llm_requests": len(llm.message_requests)}
                    result["config"] = {
                        "window_turns": capture.config.window_turns,
                        "window_overlap": capture.config.window_overlap,
                        "tool_output_chars": capture.config.tool_output_chars,
                    }
        finally:
            pool.close()
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    write_result("capture", result, markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    mix, baseline = result["gate yes/no mix"], result["gate always no (baseline)"]
    config = result["config"]
    lines = [
        "# Capture throughput",
        "",
        f"{mix['sessions']} sessions of {result['session_turns']} turns ({mix['windows']} "
        f"windows of {config['window_turns']} turns, overlap {config['window_overlap']}, tool "
        f"output cut at {config['tool_output_chars']} characters), one capture worker, a fake "
        "Messages API answering at once through the real SDK. The gate says yes to one window "
        f"in {result['yes_every']} (the user asked for a fact to be remembered), and the "
        "extractor proposes that fact. "
        f"{result['cpus']} CPUs, load average {result['load_average_before'][0]} before the "
        f"run and {result['load_average_after'][0]} after (compare numbers within one run).",
        "",
        f"**{mix['windows_per_second']} windows/s with the yes/no mix; "
        f"{baseline['windows_per_second']} windows/s with the gate always saying no** "
        "(baseline, same windows).",
        "",
        "| | windows | drain s | windows/s | memories saved | LLM requests | turns/s received |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("gate yes/no mix", "gate always no (baseline)"):
        row = result[name]
        lines.append(
            f"| {name} | {row['windows']} | {row['drain_seconds']} | "
            f"{row['windows_per_second']} | {row['counts'].get('memories_saved', 0)} | "
            f"{row['llm_requests']} | {row['turns_per_second_received']} |"
        )
    stages = list(mix["ms_per_window_by_stage"])
    lines += [
        "",
        "Where a window's time goes, ms per window (averaged over all windows; a stage only "
        "some windows reach is spread over all):",
        "",
        "| stage | yes/no mix | gate always no |",
        "|---|---|---|",
    ]
    for stage in stages:
        lines.append(
            f"| {stage} | {mix['ms_per_window_by_stage'][stage]} | "
            f"{baseline['ms_per_window_by_stage'].get(stage, 0)} |"
        )
    lines += [
        "",
        f"Transactions acting as the window's owner: {mix['owner_transactions_per_window']} per "
        f"window with the mix, {baseline['owner_transactions_per_window']} with the baseline "
        f"(the stage '{BEGIN_COMMIT}' is their begin and commit; a commit waits for the "
        "write-ahead log to reach the disk). Other: what no stage covers (the claim's "
        "commit, the worker's own code).",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run()))
