"""The thread that serves one of the tests' fake HTTP servers (embeddings, memory server, model
hub, Messages API, OTLP receiver), stopped within POLL_SECONDS of its shutdown().

The standard library's serve_forever looks whether to stop every 0.5 s, so each shutdown()
waited up to half a second: a fake server per test made that minutes of a suite run.
"""

from __future__ import annotations

import threading
from socketserver import BaseServer

POLL_SECONDS = 0.02  # how often the server checks that it should stop (the stdlib's is 0.5 s)


def serving_thread(server: BaseServer) -> threading.Thread:
    """A daemon thread (not started yet) that serves `server` until its shutdown()."""
    return threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
