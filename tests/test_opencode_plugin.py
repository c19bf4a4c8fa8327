"""The OpenCode plugin (integrations/opencode/) is tested by its own Node tests, against a fake
memory server and a fake OpenCode client; this runs them with Node's test runner, so that they
are part of the suite."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "integrations" / "opencode"
MIN_NODE_MAJOR = 20


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "`node` is not on PATH: the OpenCode plugin's tests need Node.js "
            f"{MIN_NODE_MAJOR} or later (https://nodejs.org); install it and run the suite again"
        )
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < MIN_NODE_MAJOR:
        pytest.fail(
            f"node {version} is too old for the OpenCode plugin's tests: they need Node.js "
            f"{MIN_NODE_MAJOR} or later"
        )
    return node


def _count(summary: str, name: str) -> int:
    found = re.search(rf"^# {name} (\d+)$", summary, re.MULTILINE)
    assert found is not None, f"the test runner's summary has no '# {name}' line:\n{summary}"
    return int(found.group(1))


def test_the_opencode_plugin_passes_its_node_tests() -> None:
    tests_written = sum(
        len(re.findall(r"^test\(", path.read_text(), re.MULTILINE))
        for path in (PLUGIN_DIR / "test").glob("*.test.js")
    )
    result = subprocess.run(
        [_node(), "--test", "--test-reporter=tap"],
        cwd=PLUGIN_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    failures = "\n".join(line for line in output.splitlines() if line.startswith("not ok"))
    assert result.returncode == 0, (
        f"node --test failed in {PLUGIN_DIR}:\n{failures}\n{output[-4000:]}"
    )
    assert _count(output, "fail") == 0
    assert _count(output, "cancelled") == 0
    assert _count(output, "skipped") == 0
    assert tests_written >= 40
    assert _count(output, "pass") >= tests_written, "some of the plugin's tests did not run"
