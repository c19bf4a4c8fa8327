"""The hook's input: Claude Code's JSON on stdin, read within a time limit and a size limit.

Claude Code may leave stdin open after writing the JSON (a hook that waits for the end of
file can be killed at its timeout): the input is taken as soon as it is a complete JSON
document and the writer pauses, or at end of file, or when the time is up.
"""

from __future__ import annotations

import json
import os
import select
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a hook does not need it)
if TYPE_CHECKING:
    from typing import BinaryIO

MAX_INPUT_BYTES = 8_000_000


def read_input(stream: BinaryIO, wait: float, limit: int = MAX_INPUT_BYTES) -> bytes | None:
    """The hook's input: everything until end of file, or a complete JSON document once the
    writer pauses (a stdin left open must not hold the hook), within `wait` seconds. None
    when it is over `limit` bytes."""
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError):
        descriptor = -1
    if descriptor < 0 or os.name == "nt":  # no select() on a pipe there: read to the end
        whole = stream.read(limit + 1)
        return None if len(whole) > limit else whole
    deadline = time.monotonic() + wait
    data = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([descriptor], [], [], min(left, 0.05))
        if not ready:
            if data and _complete_json(data):
                break
            continue
        chunk = os.read(descriptor, 65536)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            return None
    return bytes(data)


def _complete_json(data: bytearray) -> bool:
    if not data.rstrip().endswith(b"}"):
        return False
    try:
        json.loads(data)
    except ValueError:
        return False
    return True
