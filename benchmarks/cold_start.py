"""Cold start: of the local embedding model and the size of the environment that runs it; and,
with --processes, of the processes a user starts (the MCP server over stdio, the CLI).

Run it with the Python of the environment to measure, from the repository root:

    /path/to/venv/bin/python -I benchmarks/cold_start.py [--hub-onnx FILE --hub-tokenizer FILE]
    /path/to/venv/bin/python benchmarks/cold_start.py --processes [--checkout DIR] [--runs 5]

(-I: nothing from this checkout is imported, only the environment's emergent-memory.)

It starts fresh processes that import emergent-memory's local model and embed one query, and
times each from process start to exit: `first` with an empty model cache (the start that
exports the model from the offline extra's weights, or downloads it), `later` with the cache
that first start filled. With --hub-onnx and --hub-tokenizer, the download comes from a local
stand-in for the hub (tests/fake_hub.py) serving those files, so `first` leaves out the
transfer over a real network. It also reports the environment's size on disk (du of
sys.prefix), whether torch is installed, and each process's CPU time (user and system, less
disturbed than the wall time by other work on the machine) and peak resident memory.

--processes times fresh processes of the checkout DIR (default: this one; its code on
PYTHONPATH, the environment's packages) with its database already running (an embedded one in
a temporary data directory, migrated, holding a few memories): from process start to the
stdio server's answer to `initialize` and to `tools/list`, against a bare FastMCP server with
one trivial tool on the same Python; `emergent-memory --help` and `--version` against
`python -c "import click"`; and `emergent-memory recall` end to end. Each is run --runs times
(median reported), first on an otherwise idle machine, then again beside two busy-loop
processes (one per core of a two-core machine).

Not part of `make bench`: it measures an environment and a checkout as a user starts them
(benchmarks/README.md, "Install size and cold start", has the numbers and how they were taken).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

# Works with any version of LocalEmbeddings that takes cache_dir (hub_url only when given).
CHILD = """
import json, resource, sys
from pathlib import Path
from emergent_memory.embeddings.local import LocalEmbeddings
options = {"cache_dir": Path(sys.argv[1])}
if len(sys.argv) > 2:
    options["hub_url"] = sys.argv[2]
embedder = LocalEmbeddings(**options)
vector = embedder.embed_query("which port does the API server listen on")
print(json.dumps({
    "runtime": embedder.runtime,
    "dimensions": len(vector),
    "torch_imported": "torch" in sys.modules,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def start(cache_dir: Path, hub_url: str | None) -> dict[str, Any]:
    """One fresh process: seconds from its start to its exit, and what it reported."""
    # -I: the environment's emergent-memory, never the one in the current directory
    command = [sys.executable, "-I", "-c", CHILD, str(cache_dir)]
    command += [hub_url] if hub_url else []
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        command, capture_output=True, text=True, timeout=600, check=False, cwd=cache_dir.parent
    )
    seconds = time.perf_counter() - began
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = cpu.ru_utime + cpu.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"the measured process failed:\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["seconds"] = round(seconds, 2)
    report["cpu_seconds"] = round(cpu_seconds, 2)  # less disturbed by a busy machine
    return report


def environment_mb() -> int:
    """What `du -sm sys.prefix` says: blocks on disk, each hard-linked file once."""
    seen: set[tuple[int, int]] = set()
    blocks = 0
    for directory, _, files in os.walk(sys.prefix):
        for name in [".", *files]:
            stat = os.lstat(os.path.join(directory, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                blocks += stat.st_blocks
    return round(blocks * 512 / 2**20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=2, help="starts with an empty cache")
    parser.add_argument("--later", type=int, default=5, help="starts with the cache filled")
    parser.add_argument("--hub-onnx", type=Path, help="the ONNX file the stand-in hub serves")
    parser.add_argument("--hub-tokenizer", type=Path, help="the tokenizer.json it serves")
    parser.add_argument("--processes", action="store_true", help="time the server and the CLI")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--runs", type=int, default=5, help="--processes: runs of each")
    args = parser.parse_args()
    if args.processes:
        print(json.dumps(measure_processes(args.checkout.resolve(), args.runs), indent=1))
        return

    hub: Any = nullcontext()
    if args.hub_onnx:
        path = Path(__file__).resolve().parent.parent / "tests" / "fake_hub.py"
        spec = importlib.util.spec_from_file_location("fake_hub", path)
        assert spec is not None
        assert spec.loader is not None
        fake_hub = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fake_hub)
        hub = fake_hub.FakeHub(
            {
                "onnx/model.onnx": args.hub_onnx.read_bytes(),
                "tokenizer.json": args.hub_tokenizer.read_bytes(),
            }
        )
    with hub, tempfile.TemporaryDirectory() as scratch:
        hub_url = hub.url if args.hub_onnx else None
        first = [start(Path(scratch) / f"cache-{i}", hub_url) for i in range(args.first)]
        cache = Path(scratch) / "cache-0"
        later = [start(cache, hub_url) for _ in range(args.later)]
    print(
        json.dumps(
            {
                "python": sys.executable,
                "environment_mb": environment_mb(),
                "torch_installed": importlib.util.find_spec("torch") is not None,
                "cpus": os.cpu_count(),
                "first_start_s": [r["seconds"] for r in first],
                "later_start_s": [r["seconds"] for r in later],
                "later_start_median_s": statistics.median(r["seconds"] for r in later),
                "first_start_cpu_s": [r["cpu_seconds"] for r in first],
                "later_start_cpu_s": [r["cpu_seconds"] for r in later],
                "later_start_cpu_median_s": statistics.median(r["cpu_seconds"] for r in later),
                "load_average": os.getloadavg(),
                "first": first[0],
                "later": later[-1],
            },
            indent=1,
        )
    )


# -- --processes: the server and the CLI, cold ----------------------------------------------

BARE_SERVER = """
from fastmcp import FastMCP
server = FastMCP("bare")

@server.tool
def echo(text: str) -> str:
    return text

server.run()
"""
HOLD_DATABASE = """
import sys
from pathlib import Path
from emergent_memory.db.connection import open_database
with open_database(None, Path(sys.argv[1])) as db:
    print("up", flush=True)
    sys.stdin.read()
"""
BUSY_LOOP = "while True: pass"
MEMORIES = (
    "The API server listens on port 8080",
    "The user prefers pnpm over npm in this repository",
    "Deployments go out on Tuesdays after the standup",
    "The staging database is db-2",
)
QUERY = "which port does the API server use"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cold-start", "version": "0"},
    },
}


def stdio_start(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from process start to the answer to initialize, and to tools/list, sent as a
    client sends them (initialize at once; tools/list after its answer)."""
    began = time.perf_counter()
    with subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None

        def answer(request: dict[str, Any]) -> float:
            assert server.stdin is not None
            assert server.stdout is not None
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            for line in server.stdout:
                if json.loads(line).get("id") == request["id"]:
                    return time.perf_counter() - began
            raise SystemExit(f"the server ended before answering {request['method']}")

        initialized = answer(INITIALIZE)
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.stdin.write("\n")
        listed = answer({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    return initialized, listed


def run_seconds(command: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        command, env=env, capture_output=True, timeout=300, check=True
    )
    return time.perf_counter() - began


def measure_round(checkout_env: dict[str, str], runs: int) -> dict[str, Any]:
    """Each measurement `runs` times, round-robin; the median of each, in seconds."""
    python = sys.executable
    cli = [python, "-m", "emergent_memory"]
    times: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    for _ in range(runs):
        bare = stdio_start([python, "-c", BARE_SERVER], checkout_env)
        add("bare_fastmcp_initialize", bare[0])
        add("bare_fastmcp_tools_list", bare[1])
        ours = stdio_start([*cli, "serve", "--transport", "stdio"], checkout_env)
        add("stdio_initialize", ours[0])
        add("stdio_tools_list", ours[1])
        add("import_click", run_seconds([python, "-c", "import click"], checkout_env))
        add("help", run_seconds([*cli, "--help"], checkout_env))
        add("version", run_seconds([*cli, "--version"], checkout_env))
        add("recall", run_seconds([*cli, "recall", QUERY], checkout_env))
    medians = {name: round(statistics.median(values), 3) for name, values in times.items()}
    click = medians["import_click"]
    return {
        "median_s": medians,
        "all_s": {name: [round(v, 3) for v in values] for name, values in times.items()},
        "stdio_initialize_vs_bare": round(
            medians["stdio_initialize"] / medians["bare_fastmcp_initialize"], 2
        ),
        "help_target_s": round(3 * click + 0.2, 3),
        "load_average": os.getloadavg(),
    }


def measure_processes(checkout: Path, runs: int) -> dict[str, Any]:
    """The idle round, then the round beside two busy loops; the database runs throughout."""
    with tempfile.TemporaryDirectory(prefix="emcs-", dir="/tmp") as data_dir:  # short path
        env = {k: v for k, v in os.environ.items() if not k.startswith("EMERGENT_MEMORY_")}
        env |= {"PYTHONPATH": str(checkout), "EMERGENT_MEMORY_DATA_DIR": data_dir}
        cli = [sys.executable, "-m", "emergent_memory"]
        subprocess.run([*cli, "db", "upgrade"], env=env, capture_output=True, check=True)  # noqa: S603
        with subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
            [sys.executable, "-c", HOLD_DATABASE, data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        ) as holder:
            assert holder.stdout is not None
            assert holder.stdin is not None
            holder.stdout.readline()  # "up": the database runs until the holder's input ends
            for memory in MEMORIES:
                subprocess.run(  # noqa: S603
                    [*cli, "save", memory, "-c", "fact"], env=env, capture_output=True, check=True
                )
            idle = measure_round(env, runs)
            busy = [
                subprocess.Popen([sys.executable, "-c", BUSY_LOOP])  # noqa: S603
                for _ in range(2)
            ]
            try:
                loaded = measure_round(env, runs)
            finally:
                for loop in busy:
                    loop.kill()
                    loop.wait()
            holder.stdin.close()
            holder.wait(timeout=60)
    return {
        "checkout": str(checkout),
        "python": sys.executable,
        "cpus": os.cpu_count(),
        "idle": idle,
        "two_busy_loops": loaded,
    }


if __name__ == "__main__":
    main()
