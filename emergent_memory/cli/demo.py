"""`emergent-memory demo`: a short scripted session on a throw-away actor and project."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import click

from emergent_memory.cli.common import (
    MIGRATE_OPTION,
    cli,
    memory_service,
    reports_errors,
)
from emergent_memory.memory.models import Category

if TYPE_CHECKING:
    from emergent_memory.settings import Settings


@cli.command()
@MIGRATE_OPTION
@click.pass_obj
@reports_errors
def demo(settings: Settings, migrate: bool) -> None:
    """A short scripted session: save, dedup and supersede, a different fact kept apart,
    recall with scores, update, restore, forget.

    It runs as a throw-away actor in a throw-away project and forgets everything at the end.
    """
    from emergent_memory.auth.principal import READ, WRITE, Principal

    me = Principal(uuid.uuid4(), uuid.uuid4(), frozenset({READ, WRITE}))

    def step(title: str) -> None:
        click.echo(click.style(f"\n== {title}", bold=True))

    with memory_service(settings, migrate=migrate) as service:
        step("save three memories")
        first: tuple[tuple[str, Category], ...] = (
            ("The user prefers pnpm over npm", "preference"),
            ("Integration tests need Docker running", "fact"),
            ("Error ERR_4471 means the licence server is unreachable", "fact"),
        )
        for content, category in first:
            result = service.save(me, content, category, source="explicit")
            click.echo(f"{result['status']:9} {content}")

        step("save the same fact again, and a reworded one")
        again = service.save(me, "the user prefers PNPM over npm", "preference")
        click.echo(f"{again['status']:9} (exact duplicate: nothing new stored)")
        reworded = service.save(
            me, "The user likes using pnpm instead of npm", "preference", source="explicit"
        )
        click.echo(
            f"{reworded['status']:9} similarity {reworded['similarity']}: supersedes "
            f"{', '.join(reworded['superseded_ids']) or 'nothing'}"
        )

        step("save a different fact in almost the same words")
        service.save(me, "Service A listens on port 9001", "fact")
        other = service.save(me, "Service B listens on port 9002", "fact")
        for close in other["possible_duplicates"]:
            click.echo(
                f"{other['status']:9} similarity {close['similarity']}: kept apart from "
                f"{close['content']!r} (another service, another port), reported as a "
                "possible duplicate"
            )

        for query in ("which package manager should I use?", "ERR_4471"):
            step(f"recall {query!r}")
            for memory in service.recall(me, query, limit=3)["memories"]:
                scores = memory["scores"]
                click.echo(
                    f"{memory['score']:.4f} (text rank {scores['lexical_rank'] or '-'}, vector "
                    f"rank {scores['vector_rank'] or '-'})  {memory['content']}"
                )

        step("update a memory (same id, new content)")
        target = service.recall(me, "Docker", limit=1)["memories"][0]
        updated = service.update(
            me, target["id"], {"content": "Integration tests need Docker or Podman running"}
        )["memory"]
        click.echo(f"{updated['id']}  {updated['content']}")

        step("restore the superseded memory (a supersession can be undone)")
        for old_id in reworded["superseded_ids"]:
            restored = service.restore(me, old_id)
            click.echo(f"{restored['memory']['id']}  {restored['memory']['content']}")

        step("forget everything")
        forgotten = service.forget_all(me, confirm=True)
        click.echo(f"deleted {forgotten['deleted_count']} memories")
        left = service.recall(me, "pnpm")["memories"]
        click.echo(f"recall 'pnpm' now finds {len(left)} memories")
