"""Cold start of the local embedding model and the size of the environment that runs it.

Run it with the Python of the environment to measure, from the repository root:

    /path/to/venv/bin/python -I benchmarks/cold_start.py [--hub-onnx FILE --hub-tokenizer FILE]

(-I: nothing from this checkout is imported, only the environment's emergent-memory.)

It starts fresh processes that import emergent-memory's local model and embed one query, and
times each from process start to exit: `first` with an empty model cache (the start that
exports the model from the offline extra's weights, or downloads it), `later` with the cache
that first start filled. With --hub-onnx and --hub-tokenizer, the download comes from a local
stand-in for the hub (tests/fake_hub.py) serving those files, so `first` leaves out the
transfer over a real network. It also reports the environment's size on disk (du of
sys.prefix), whether torch is installed, and each process's CPU time (user and system, less
disturbed than the wall time by other work on the machine) and peak resident memory.

Not part of `make bench`: it measures an installed environment, not this checkout
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
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()
