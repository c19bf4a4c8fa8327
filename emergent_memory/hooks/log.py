"""The hooks' log file: one line per problem, capped in size, never a secret or a message.

A hook may not write to stderr or stdout (Claude Code shows or parses them), so problems go
here. Callers pass messages they composed from metadata (statuses, counts, paths, error
kinds): never a token, a prompt, a transcript's text or a server's error message, which may
quote them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

MAX_LOG_BYTES = 1_000_000  # then the file becomes hooks.log.1 (replacing the previous one)


class HookLog:
    def __init__(self, path: Path, event: str, max_bytes: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self.event = event or "?"
        self.max_bytes = max_bytes

    def info(self, message: str) -> None:
        self.write("INFO", message)

    def warning(self, message: str) -> None:
        self.write("WARNING", message)

    def error(self, message: str) -> None:
        self.write("ERROR", message)

    def write(self, level: str, message: str) -> None:
        """Append one line; a log that cannot be written is given up silently (the hook must
        not fail because of its log)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} {level} {self.event} [{os.getpid()}] {message}".replace("\n", " ")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._rotate()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (line + "\n").encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError:
            pass

    def _rotate(self) -> None:
        try:
            if self.path.stat().st_size >= self.max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        except OSError:
            pass


def error_location(error: BaseException) -> str:
    """Where an exception was raised (file:line): logged for a bug instead of its message,
    which may hold data."""
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return "?"
    return f"{Path(trace.tb_frame.f_code.co_filename).name}:{trace.tb_lineno}"
