"""Hook wall time: how long Claude Code waits for `emergent-memory hook EVENT`, per event.

The whole hook process is timed, from spawn to exit (interpreter start and imports included),
as Claude Code runs it: the `emergent-memory` program beside this Python (what
`emergent-memory hooks install` writes into the settings), the event's JSON on stdin (the
shapes Claude Code 2.1.197 sent, tests/data/claude_code/preference.hooks.json), against the
real `emergent-memory serve --transport http` on an embedded PostgreSQL with the real local
model, a token with the hooks' scopes, and capture on (its LLM a local fake Messages API,
tests/fake_anthropic.py, whose gate says no at once). The memories are one user's of the
labelled retrieval set, in the project of a temporary git repository (the session's `cwd`).
PreCompact's input is the one recorded in tests/data/claude_code/resume_compact.hooks.json.

Each session runs the events in Claude Code's order: SessionStart (source startup), then
UserPromptSubmit with one of the user's labelled prompts (some get memories injected, some
not), Stop (the recorded transcript, sent whole the first time), PreCompact and SessionEnd
(the rest, final). A few runs of each are done first and not counted (warm-up).

Baselines in the same run, measured round robin with the hooks: spawning the same Python with
`-c pass` (the floor of any hook process), the same Python importing the hook runner (`-c
"import emergent_memory.entry, emergent_memory.hooks.run"`: what the imports add), the
UserPromptSubmit hook with no server listening (everything but the request), and the hook's
HTTP request alone, sent from this process by the hook's own client (a new connection per
request).

With BENCH_HOOKS_COMPARE set to another source tree of the package (e.g. `git archive` of an
earlier commit), that tree's UserPromptSubmit hook is measured in the same rounds too, right
after this one's, for a session of its own with the same state and prompt: a before/after
under the same load (BENCH_HOOKS_COMPARE_NAME names it in the report, e.g. a commit).

The processes run with their bytecode cached, as an installed package's are:
PYTHONDONTWRITEBYTECODE is left out of their environment, so the warm-up runs write the
`__pycache__` files that a developer's environment may otherwise never write (a hook would
then compile its modules on every run).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import psycopg

from benchmarks import quality
from benchmarks.common import CachedEmbeddings, bench_database, percentiles, write_result
from emergent_memory.auth.local_ids import derived_project_id, project_root
from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.auth.tokens import create_token
from emergent_memory.db.pool import create_pool
from emergent_memory.hooks.client import Server
from emergent_memory.hooks.run import EVENTS
from emergent_memory.hooks.state import state_path
from emergent_memory.memory import MemoryConfig, MemoryService
from emergent_memory.memory.injection import _WORD  # the words injection counts
from emergent_memory.settings import Settings, default_model_cache_dir
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, Reply, tool_use
from tests.helpers import free_port, http_server_process

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "claude_code"
TARGET_P95_MS = {"UserPromptSubmit": 150.0}
WARM_UP = 3
USER = "u1"


def hook_command() -> tuple[list[str], str]:
    """The program `hooks install` writes (the `emergent-memory` script beside this Python),
    unless that script predates the hook entry point (an environment installed before it:
    its hooks would load the whole CLI), then `python -m emergent_memory`; and which."""
    script = Path(sys.executable).with_name("emergent-memory")
    if script.is_file() and "emergent_memory.entry" in script.read_text(errors="replace"):
        return [str(script)], str(script)
    return [sys.executable, "-m", "emergent_memory"], (
        f"{sys.executable} -m emergent_memory (the {script.name} script of this environment "
        "predates the hook entry point: reinstall with pip install -e .)"
    )


def recorded_inputs() -> dict[str, dict[str, Any]]:
    """The hook input Claude Code sent for each event: the first of its kind in the recorded
    session with a preference (PreCompact: in the one that was compacted; PostToolUse: the
    model's Write of a note into Claude Code's auto memory folder)."""
    inputs: dict[str, dict[str, Any]] = {}
    recorded = ("preference", "resume_compact", "auto_memory_write")
    for name in (f"{scenario}.hooks.json" for scenario in recorded):
        for entry in json.loads((FIXTURES / name).read_text()):
            inputs.setdefault(entry["event"], entry["input"])
    return inputs


def fake_gate() -> FakeAnthropic:
    """A fake Messages API whose every tool call (the gate) answers "nothing worth keeping"."""

    def answer(request: RecordedRequest) -> Reply | None:
        tool = request.forced_tool
        if tool is None:
            return None
        return tool_use(tool, {"worth_remembering": False, "reason": "nothing lasting"})

    return FakeAnthropic(handler=answer)


def seed(url: str, embedder: CachedEmbeddings, project: uuid.UUID) -> tuple[str, list[str]]:
    """USER's memories of the labelled set in `project` (the session's repository), a token
    with the hooks' scopes, and USER's labelled prompts with the words injection needs (the
    server's default minimum, counted as it counts them)."""
    devset = quality.DevSet()
    actor = quality.ident("user", USER)
    principal = Principal(actor, project, frozenset({READ, WRITE}))
    pool = create_pool(url, min_size=1, max_size=2)
    try:
        service = MemoryService(pool, embedder, MemoryConfig(dedup_threshold=2.0))
        for memory in devset.memories:
            if memory["user"] == USER and not memory.get("superseded_by"):
                scope: Literal["user", "project"] = (
                    "user" if memory["scope"] == "user" else "project"
                )
                service.save(
                    principal,
                    memory["content"],
                    memory["category"],
                    source=memory["source"],
                    scope=scope,
                )
    finally:
        pool.close()
    embedder.save()
    with psycopg.connect(url) as conn:
        token = create_token(
            conn,
            name="hooks benchmark",
            actor_id=actor,
            project_id=project,
            scopes=[READ, WRITE, ANY_PROJECT],
        ).token
    min_words = Settings.model_fields["injection_min_prompt_words"].default
    prompts = [
        q["query"]
        for q in devset.queries
        if q["user"] == USER and len(_WORD.findall(q["query"])) >= min_words
    ]
    return token, prompts


def spawn(
    command: Sequence[str], stdin: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, bytes]:
    """One process from spawn to exit: milliseconds, and what it printed."""
    start = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own program, fixed arguments
        list(command), input=stdin, env=env, cwd=cwd, capture_output=True, check=False
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{command[-1]} exited {done.returncode}: {done.stderr[-500:]!r}")
    return elapsed, done.stdout


def request_alone(base: str, token: str, body: dict[str, Any]) -> float:
    """The hook's context request sent from this process by the hook's client, on a new
    connection: milliseconds."""
    start = time.perf_counter()
    # a timeout that only keeps a dead server from hanging the run: a slow answer on a busy
    # machine is measured (and weighed against the baselines), never a crash of the benchmark
    answer = Server.from_url(base).request(
        "POST", "/api/v1/context", timeout=120, payload=body, token=token
    )
    elapsed = (time.perf_counter() - start) * 1000
    if answer.status != 200:
        raise RuntimeError(f"/api/v1/context answered {answer.status}")
    return elapsed


def run(runs: int = 100) -> dict[str, Any]:
    load_before = [round(x, 2) for x in os.getloadavg()]
    embedder = CachedEmbeddings()
    command, program = hook_command()
    inputs = recorded_inputs()
    with tempfile.TemporaryDirectory(prefix="emb-hooks-") as scratch, fake_gate() as llm:
        home = Path(scratch)
        repository = home / "repository"
        repository.mkdir()
        subprocess.run(["git", "init", "-q", str(repository)], check=True)  # noqa: S603, S607
        project = derived_project_id(project_root(repository))
        transcript = home / "transcript.jsonl"
        shutil.copy(FIXTURES / "preference.jsonl", transcript)
        base_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("EMERGENT_MEMORY_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        with bench_database() as url:
            token, prompts = seed(url, embedder, project)
            server_env = base_env | {
                "EMERGENT_MEMORY_DATABASE_URL": url,
                "EMERGENT_MEMORY_DATA_DIR": str(home / "server"),
                "EMERGENT_MEMORY_MODEL_CACHE_DIR": str(default_model_cache_dir()),
                "EMERGENT_MEMORY_ANTHROPIC_API_KEY": "benchmark",
                "EMERGENT_MEMORY_ANTHROPIC_BASE_URL": llm.url,
            }
            with http_server_process(server_env) as server:
                base = server.base
                hook_env = base_env | {
                    "EMERGENT_MEMORY_HOOK_URL": base,
                    "EMERGENT_MEMORY_HOOK_TOKEN": token,
                    "EMERGENT_MEMORY_HOOK_CONFIG": str(home / "hooks.json"),
                    "EMERGENT_MEMORY_DATA_DIR": str(home / "hooks"),
                    "CLAUDE_PROJECT_DIR": str(repository),
                }
                nowhere = f"http://127.0.0.1:{free_port()}"  # the no-server baseline's URL
                result = measure(
                    command,
                    inputs,
                    prompts,
                    hook_env,
                    repository,
                    transcript,
                    (base, token, nowhere),
                    runs,
                )
                result["hook_log"] = hook_log(home / "hooks" / "logs" / "hooks.log", nowhere)
                result["sessions_with_turns"] = sessions_with_turns(url)
                result["llm_requests"] = len(llm.message_requests)
    result |= {
        "program": program,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "targets_p95_ms": TARGET_P95_MS,
        "warm_up_runs": WARM_UP,
    }
    write_result("hooks", result, markdown(result))
    return result


def hook_log(path: Path, nowhere: str) -> dict[str, Any]:
    """The hooks' log: its lines, and those the no-server baseline does not explain. That
    baseline logs one line a run, naming `nowhere`; every other hook run reached the server,
    so any other line is a problem (a refused token, a server that did not answer), kept
    without its time and process id (the log holds no secret and no text)."""
    lines = path.read_text().splitlines() if path.exists() else []
    unexplained = []
    for line in lines:
        if nowhere not in line:
            parts = line.split(" ", 4)  # time, level, event, [process id], message
            unexplained.append(" ".join(parts[1:3] + parts[4:]) if len(parts) == 5 else line)
    return {"lines": len(lines), "unexplained": unexplained}


def sessions_with_turns(url: str) -> int:
    """The sessions whose transcript turns the server received (from the Stop hooks)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM kb.agent_sessions WHERE turns_received > 0"
        ).fetchone()
    return int(row[0]) if row else 0


BARE_PYTHON = "python -c pass"
IMPORT = "python importing the hook runner"
SERVER_DOWN = "hook UserPromptSubmit, no server (connection refused)"
REQUEST = "the context request alone (prompt)"


def measure(
    command: Sequence[str],
    inputs: dict[str, dict[str, Any]],
    prompts: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    transcript: Path,
    servers: tuple[str, str, str],
    runs: int,
) -> dict[str, Any]:
    """Round robin, so that the machine's changing load weighs on every measure alike: each
    round is one session's five events, then one of each baseline. `servers`: the server's
    base URL, the hooks' token, and a URL where no server listens (the baseline's)."""
    base, token, nowhere = servers
    samples: dict[str, list[float]] = {event: [] for event in EVENTS}
    baselines: dict[str, list[float]] = {BARE_PYTHON: [], IMPORT: [], SERVER_DOWN: [], REQUEST: []}
    down = env | {"EMERGENT_MEMORY_HOOK_URL": nowhere}
    project = str(derived_project_id(project_root(cwd)))
    compare = os.environ.get("BENCH_HOOKS_COMPARE")
    other = f"hook UserPromptSubmit of {os.environ.get('BENCH_HOOKS_COMPARE_NAME', compare)}"
    if compare:
        baselines[other] = []
    injected = 0
    for number in range(WARM_UP + runs):
        counted = number >= WARM_UP
        session = str(uuid.uuid4())
        prompt = prompts[number % len(prompts)]
        for event in EVENTS:
            payload = dict(inputs[event]) | {
                "session_id": session,
                "cwd": str(cwd),
                "transcript_path": str(transcript),
            }
            if event == "UserPromptSubmit":
                payload["prompt"] = prompt
            elapsed, printed = spawn(
                [*command, "hook", event], json.dumps(payload).encode(), env, cwd
            )
            if counted:
                samples[event].append(elapsed)
                injected += event == "UserPromptSubmit" and bool(printed.strip())
            if compare and event == "UserPromptSubmit":
                twin = str(uuid.uuid4())  # the same state: its project known since SessionStart
                data = Path(env["EMERGENT_MEMORY_DATA_DIR"])
                shutil.copy(state_path(data, session), state_path(data, twin))
                elapsed, _ = spawn(
                    [*command, "hook", event],
                    json.dumps(payload | {"session_id": twin}).encode(),
                    env | {"PYTHONPATH": compare},
                    cwd,
                )
                if counted:
                    baselines[other].append(elapsed)
        alone = {
            BARE_PYTHON: spawn([sys.executable, "-c", "pass"], b"", env, cwd)[0],
            IMPORT: spawn([sys.executable, "-c", IMPORTED], b"", env, cwd)[0],
            SERVER_DOWN: spawn(
                [*command, "hook", "UserPromptSubmit"],
                json.dumps(
                    dict(inputs["UserPromptSubmit"])
                    | {"session_id": session, "cwd": str(cwd), "prompt": prompt}
                ).encode(),
                down,
                cwd,
            )[0],
            REQUEST: request_alone(
                base,
                token,
                {
                    "session_id": str(uuid.uuid4()),
                    "event": "prompt",
                    "prompt": prompt,
                    "client": "claude-code",
                    "project_id": project,
                },
            ),
        }
        if counted:
            for name, elapsed in alone.items():
                baselines[name].append(elapsed)
    return {
        "runs": runs,
        "import_time_ms": import_times(env, cwd),
        "events": {event: _spread(values) for event, values in samples.items()},
        "prompts_injected_into": injected,
        "baselines": {name: _spread(values) for name, values in baselines.items()},
    }


IMPORTED = "import emergent_memory.entry, emergent_memory.hooks.run"


def import_times(env: dict[str, str], cwd: Path, repeat: int = 5) -> dict[str, float]:
    """Where the hook runner's import time goes: the median, over `repeat` fresh processes,
    of each module's cumulative import time (python -X importtime), the largest first."""
    seen: dict[str, list[float]] = {}
    for _ in range(repeat):
        done = subprocess.run(  # noqa: S603 - this Python, fixed arguments
            [sys.executable, "-X", "importtime", "-c", IMPORTED],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        for line in done.stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                seen.setdefault(parts[2].strip(), []).append(int(parts[1]) / 1000)
    medians = {name: round(statistics.median(values), 1) for name, values in seen.items()}
    return dict(sorted(medians.items(), key=lambda item: -item[1])[:12])


def _spread(samples: Sequence[float]) -> dict[str, float]:
    return percentiles(samples) | {"max": round(max(samples), 3)}


def markdown(result: dict[str, Any]) -> str:
    target = result["targets_p95_ms"]["UserPromptSubmit"]
    prompt = result["events"]["UserPromptSubmit"]
    lines = [
        "# Hook wall time",
        "",
        f"The whole `emergent-memory hook EVENT` process, spawn to exit, {result['runs']} runs "
        f"per event after {result['warm_up_runs']} not counted, on {result['cpus']} CPUs "
        f"(load average before {result['load_average_before'][0]}, after "
        f"{result['load_average_after'][0]}); the real "
        "HTTP server on an embedded PostgreSQL with the local model, capture on (a fake gate "
        f"that says no). Program: `{result['program']}` (Python {result['python']}, bytecode "
        "cached).",
        "",
        f"**UserPromptSubmit: p50 {prompt['p50']:.0f} ms, p95 {prompt['p95']:.0f} ms, max "
        f"{prompt['max']:.0f} ms** (target p95 <= {target:.0f} ms: "
        f"{'met' if prompt['p95'] <= target else 'missed'}); "
        f"{result['prompts_injected_into']} of {result['runs']} prompts got memories injected.",
        "",
        "| process | p50 ms | p95 ms | max ms | mean ms |",
        "|---|---|---|---|---|",
    ]
    rows = [(f"hook {event}", row) for event, row in result["events"].items()]
    rows += [(f"baseline: {name}", row) for name, row in result["baselines"].items()]
    for name, row in rows:
        lines.append(
            f"| {name} | {row['p50']:.1f} | {row['p95']:.1f} | {row['max']:.1f} | "
            f"{row['mean']:.1f} |"
        )
    imports = ", ".join(f"{name} {ms:.0f}" for name, ms in result["import_time_ms"].items())
    lines += [
        "",
        "Where the imports go (`python -X importtime`, cumulative ms, median of 5 processes; "
        f"nested modules are counted in their parents too): {imports}.",
        "",
        f"Hooks' log: {result['hook_log']['lines']} lines (the no-server baseline logs one a "
        f"run), {len(result['hook_log']['unexplained'])} from the runs with the server; "
        f"sessions whose transcript the server received: {result['sessions_with_turns']}. "
        f"Requests to the fake Messages API during the run: {result['llm_requests']}.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run()))
