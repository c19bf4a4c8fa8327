"""`make bench`: every benchmark, written to benchmarks/results/ (JSON and markdown).

python -m benchmarks.run                 # all: dedup, secrets, quality, injection, capture,
                                         # hooks, round trips, latency, dashboard, lifecycle,
                                         # verify, telemetry, provenance, tools
python -m benchmarks.run --only dedup,secrets,quality,injection,capture,hooks,roundtrips
python -m benchmarks.run --scale smoke   # a tiny run of everything (what the tests do)

A full run exits with status 1 when a timing expectation (a ratio to a baseline measured in
the same run, e.g. secrets.py's adversarial inputs) did not hold; a smoke run never judges time.
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks import (
    capture,
    dashboard,
    dedup,
    dedup_chat,
    hooks,
    injection,
    latency,
    lifecycle,
    provenance,
    quality,
    roundtrips,
    secrets,
    telemetry,
    tool_tokens,
    verify,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        default="dedup,dedup_chat,secrets,quality,injection,capture,hooks,roundtrips,latency,dashboard,"
        "lifecycle,verify,telemetry,provenance,tools",
    )
    parser.add_argument("--scale", choices=["smoke", "full"], default="full")
    arguments = parser.parse_args()
    smoke = arguments.scale == "smoke"
    # timing expectations (ratios to a baseline of the same run) that did not hold
    broken: list[str] = []
    for name in arguments.only.split(","):
        start = time.perf_counter()
        if name == "dedup":
            dedup.run(limit=40 if smoke else None)
        elif name == "dedup_chat":
            dedup_chat.run(limit=40 if smoke else None)
        elif name == "secrets":
            timing = secrets.run(limit=60 if smoke else None)["timing_of_ours"]
            broken += [
                f"secrets: {e['what']}: {e['measured']} (at most {e['limit']})"
                for e in timing["expectations"]
                if not e["held"]
            ]
        elif name == "quality":
            quality.run(
                limit_queries=12 if smoke else None,
                sweep=not smoke,
                background=20 if smoke else 300,
            )
        elif name == "injection":
            injection.run(limit=40 if smoke else None)
        elif name == "capture":
            capture.run(sessions_count=2 if smoke else 60)
        elif name == "hooks":
            hooks.run(runs=2 if smoke else 100)
        elif name == "roundtrips":
            roundtrips.run(rounds=2 if smoke else 5, timed=3 if smoke else 50)
        elif name == "latency":
            latency.run(
                arguments.scale, calls=20 if smoke else 500, http_seconds=3 if smoke else 20
            )
        elif name == "lifecycle":
            if smoke:
                lifecycle.run(
                    users=2,
                    background=10,
                    recalls_per_step=3,
                    days=60,
                    variant=False,
                    worlds=lifecycle.WORLDS[:2],
                )
            else:
                lifecycle.run()
        elif name == "dashboard":
            dashboard.run(arguments.scale, calls=5 if smoke else 100)
        elif name == "verify":
            verify.run(limit=40 if smoke else None)
        elif name == "provenance":
            provenance.run()  # no model, no database: the whole sets take about a second
        elif name == "tools":
            tool_tokens.run()  # tokens by BENCH_TOKENIZER's file, else characters / 3.5
        elif name == "telemetry":
            telemetry.run(calls=500 if smoke else 10_000, repeats=2 if smoke else 7)
        else:
            parser.error(f"unknown benchmark {name!r}")
        print(f"{name}: {time.perf_counter() - start:.0f} s")
    for expectation in broken:
        print(f"expectation not held: {expectation}", file=sys.stderr)
    # a smoke run is too small to judge time: it only shows the scripts work
    if broken and not smoke:
        sys.exit(1)


if __name__ == "__main__":
    main()
