"""How a queue worker runs: rounds until told to stop, a pause that grows after database
trouble, a background thread, retry delays that spread out, a worker id, counts of what its
rounds did, and reasons short enough to keep in a queue's last_error.

The embedding worker (embeddings/worker.py) and the capture worker (memory/capture_worker.py)
both run this way; each supplies its round (`run_once`) and when to rest between rounds.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Self, TypeVar

from emergent_memory.db.pool import lost_connection, one_line
from emergent_memory.errors import DatabaseUnavailable, ServiceBusy

STOP_TIMEOUT = 15.0  # seconds a server waits for a worker thread at shutdown
ERROR_PAUSE_MAX = 60.0  # seconds: the longest pause after repeated database errors
JITTER = 0.1  # a retry waits up to this fraction longer, so failed items spread out
ERROR_CHARS = 300  # the longest reason kept in a queue item's last_error

C = TypeVar("C")


@dataclass(slots=True)
class Counts:
    """Counters (int fields of a subclass) of what a worker's rounds did."""

    def add(self, other: Self) -> None:
        """Add another round's counts to these."""
        for name in self.as_dict():
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def short_reason(reason: str) -> str:
    """The reason, cut to ERROR_CHARS characters (ending with ...) when it is longer."""
    return reason if len(reason) <= ERROR_CHARS else reason[: ERROR_CHARS - 3] + "..."


def default_worker_id() -> str:
    """host:pid:random, so a claimed item names the process that holds it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def backoff(attempts: int, base: float, most: float) -> float:
    """Seconds before the next attempt of an item that failed `attempts` times: `base`,
    doubling with each attempt, at most `most` (no jitter)."""
    return min(most, base * 2.0 ** max(attempts - 1, 0))


def with_jitter(delay: float) -> float:
    """`delay` plus up to JITTER of it, so that items failed together are retried apart."""
    return delay + random.uniform(0, JITTER * delay)  # noqa: S311 - spreading retries


def database_trouble(error: BaseException) -> bool:
    """Whether a round failed because the database is down, unreachable or busy (expected, and
    retried later) rather than for a reason worth a traceback (a disk full, a deadlock, a
    bug)."""
    return isinstance(error, DatabaseUnavailable | ServiceBusy) or lost_connection(error)


def run_rounds(
    run_once: Callable[[], C],
    stop: threading.Event,
    poll_interval: float,
    *,
    rest: Callable[[C], bool],
    report: Callable[[C], None],
    what: str,
    logger: logging.Logger,
) -> None:
    """Rounds until `stop` is set: at once while `rest(counts)` is false, else after
    `poll_interval` seconds; `report(counts)` after each round. A round that fails is logged
    and retried after a pause that doubles up to ERROR_PAUSE_MAX, never fatal."""
    errors = 0
    while not stop.is_set():
        try:
            counts = run_once()
        except Exception as error:
            if stop.is_set():  # shutting down: the pool may be closing under us
                return
            errors += 1
            pause = min(ERROR_PAUSE_MAX, poll_interval * 2.0 ** min(errors - 1, 10))
            if not database_trouble(error):
                logger.exception("%s round failed; retrying in %.0f s", what, pause)
            else:
                # expected while the database is down or busy: one line, no traceback, and
                # none at all for an outage the application's pool reports itself
                # (DatabaseUnavailable) or after the first failed round
                quiet = errors > 1 or isinstance(error, DatabaseUnavailable)
                logger.log(
                    logging.DEBUG if quiet else logging.WARNING,
                    "%s round failed (%s); retrying in %.1f s",
                    what,
                    one_line(error),
                    pause,
                )
            stop.wait(pause)
            continue
        errors = 0
        report(counts)
        if rest(counts):
            stop.wait(poll_interval)


@contextmanager
def running_in_thread(
    run_forever: Callable[[threading.Event, float], None],
    poll_interval: float,
    *,
    name: str,
    what: str,
    logger: logging.Logger,
) -> Iterator[threading.Thread]:
    """`run_forever(stop, poll_interval)` in a background thread until the block ends; then
    stop it, waiting for the round in progress (abandoned after STOP_TIMEOUT seconds: what it
    held is claimed again once its lock times out)."""
    stop = threading.Event()
    thread = threading.Thread(
        target=run_forever, args=(stop, poll_interval), name=name, daemon=True
    )
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            logger.warning(
                "the %s did not stop within %.0f s; what it held will be retried once its "
                "lock times out",
                what,
                STOP_TIMEOUT,
            )
