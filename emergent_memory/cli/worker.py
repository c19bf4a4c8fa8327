"""Commands on the workers: the embedding worker (and the capture worker when capture is on,
and the archive job), and re-embedding every memory."""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from emergent_memory.cli.common import JSON_OPTION, cli, emit, reports_errors
from emergent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


@cli.command("worker")
@click.option("--once", is_flag=True, help="Process the jobs that are due, then exit.")
@click.option("--retry-dead", is_flag=True, help="First give dead jobs a new set of attempts.")
@JSON_OPTION
@click.pass_obj
@reports_errors
def worker_command(settings: Settings, once: bool, retry_dead: bool, as_json: bool) -> None:
    """Compute the embeddings still queued (memories saved while the provider failed), and,
    when capture is on (EMERGENT_MEMORY_ANTHROPIC_API_KEY), capture queued conversations;
    every EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS (24; 0: never), archive the memories nobody
    used for long (`emergent-memory lifecycle archive`; not with --once).

    Runs until SIGINT or SIGTERM (the round in progress is finished; a second signal stops
    at once), or with --once until no job or window is due. Any number of workers, and
    servers started with --worker, can share the queues.
    """
    from emergent_memory.app import open_workers

    with open_workers(settings) as workers:
        worker, capture, archive = workers.embedding, workers.capture, workers.archive
        revived = worker.retry_dead() if retry_dead else 0
        if once:
            counts = worker.drain()
            captured = None if capture is None else capture.drain().as_dict()
            data: dict[str, Any] = {
                "revived": revived,
                **counts.as_dict(),
                "queue": worker.queue_counts(),
                "capture": captured,
            }

            def human() -> None:
                if retry_dead:
                    click.echo(f"{revived} dead jobs revived")
                click.echo(_describe_round(data))
                if captured is not None:
                    click.echo(_describe_capture(captured))

            emit(data, as_json, human)
            return
        stop = threading.Event()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def request_stop(signum: int, frame: Any) -> None:
            if stop.is_set():
                raise SystemExit(128 + signum)
            click.echo("emergent-memory worker: stopping after the current round", err=True)
            stop.set()

        for sig in previous:
            signal.signal(sig, request_stop)
        click.echo(
            f"emergent-memory worker {worker.worker_id}: computing queued embeddings"
            + (f" ({revived} dead jobs revived)" if retry_dead else "")
            + (", capturing queued conversations" if capture is not None else "")
            + (
                f", archiving unused memories every {settings.archive_interval_hours:g} h"
                if archive is not None
                else ""
            )
            + "; Ctrl-C to stop",
            err=True,
        )
        # The rounds run in threads; this one only waits, so the signal handler never runs
        # while a worker holds a lock it needs.
        poll = settings.worker_poll_interval_seconds
        threads = [
            threading.Thread(
                target=worker.run_forever, args=(stop, poll), name="embedding-worker", daemon=True
            )
        ]
        if capture is not None:
            threads.append(
                threading.Thread(
                    target=capture.run_forever,
                    args=(stop, poll),
                    name="capture-worker",
                    daemon=True,
                )
            )
        if archive is not None:  # its first run a minute after the start, then every interval
            threads.append(
                threading.Thread(
                    target=archive.run_forever, args=(stop,), name="archive-job", daemon=True
                )
            )
        try:
            for thread in threads:
                thread.start()
            while any(thread.is_alive() for thread in threads):
                for thread in threads:
                    thread.join(0.5)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _describe_round(data: Mapping[str, Any]) -> str:
    queue = data["queue"]
    return (
        f"claimed {data['claimed']} jobs: {data['embedded']} embedded, {data['done']} done, "
        f"{data['retried']} to retry, {data['dead']} dead; queue: {queue['pending']} pending, "
        f"{queue['running']} running, {queue['dead']} dead"
    )


def _describe_capture(counts: Mapping[str, Any]) -> str:
    return (
        f"capture: claimed {counts['claimed']} windows: {counts['captured']} captured, "
        f"{counts['memories_saved']} memories saved, {counts['retried']} to retry, "
        f"{counts['parked']} parked until the API's retry-after, {counts['postponed']} waiting "
        f"(the budget, or their actor's rate limit), {counts['dead']} dead"
    )


@cli.command()
@click.option("--model", default=None, help="The model to re-embed with (default: configured).")
@click.option("--batch-size", type=click.IntRange(1, 1024), default=64, show_default=True)
@JSON_OPTION
@click.pass_obj
@reports_errors
def reembed(settings: Settings, model: str | None, batch_size: int, as_json: bool) -> None:
    """Give every memory a vector from the configured (or given) embedding model: those
    without one from it (no vector, or another model's) are embedded; a vector already from
    it is kept, so a second run, or a run with the model in use, embeds nothing, and an
    interrupted run goes on where it stopped."""
    from emergent_memory.app import open_admin_services
    from emergent_memory.embeddings.local import LOCAL_MODEL_NAME

    if model is not None:
        if settings.embedding_provider == "local":
            if model != LOCAL_MODEL_NAME:
                raise InvalidInput(
                    f"the local provider has one model, {LOCAL_MODEL_NAME}; for another, set "
                    "EMERGENT_MEMORY_EMBEDDING_PROVIDER=openai and its settings"
                )
        else:
            settings = settings.model_copy(update={"embedding_model": model})
    with open_admin_services(settings, embeds=True) as admin:
        result = admin.maintenance.reembed(batch_size=batch_size)
    emit(
        result,
        as_json,
        lambda: click.echo(_describe_reembed(result)),
    )


def _describe_reembed(result: Mapping[str, Any]) -> str:
    done, model, left = result["reembedded"], result["model"], result["remaining"]
    kept = f"memories that already had a vector from {model} keep it"
    if done == 0 and left == 0:
        return f"re-embedded 0 memories: every memory already has a vector from {model} ({kept})"
    return f"re-embedded {done} memories that had no vector from {model} ({kept}); {left} left"
