"""Realistic synthetic memories for the latency benchmark: varied length, vocabulary,
categories and scopes, reproducible from a seed."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

SERVICES = [
    "billing",
    "search",
    "auth",
    "ledger",
    "notifications",
    "checkout",
    "inventory",
    "reporting",
    "ingest",
    "gateway",
    "scheduler",
    "payments",
    "profiles",
    "catalog",
    "recommendations",
    "audit",
    "exports",
    "webhooks",
    "pricing",
    "analytics",
]
TOOLS = [
    "pnpm",
    "poetry",
    "ruff",
    "black",
    "pytest",
    "vitest",
    "Terraform",
    "Helm",
    "Docker",
    "Podman",
    "Bazel",
    "Gradle",
    "cargo",
    "uv",
    "mypy",
    "eslint",
    "prettier",
    "Airflow",
    "dbt",
    "Kafka",
    "Redis",
    "Postgres",
    "SQLite",
    "ClickHouse",
    "Grafana",
    "Sentry",
]
LANGUAGES = ["Python", "TypeScript", "Go", "Rust", "Kotlin", "Swift", "Java", "Elixir", "C++"]
PEOPLE = [
    "Alice",
    "Bruno",
    "Chen",
    "Dara",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
ENVIRONMENTS = ["staging", "production", "preview", "the CI sandbox", "the load-test cluster"]

TEMPLATES = {
    "preference": [
        "The user prefers {tool} over {tool2} for {language} projects.",
        "The user likes short commit messages written in the imperative mood.",
        "The user wants {language} code formatted with {tool} before every review.",
        "The user prefers small pull requests that touch only the {service} service.",
        "When pairing, the user likes to see the failing test before the fix.",
    ],
    "pattern": [
        "The user usually starts the day by reviewing {person}'s open pull requests.",
        "Bugs in the {service} service are usually caused by stale {tool} caches.",
        "The user tends to refactor {language} modules before adding features.",
        "Deploys of {service} are usually followed by a spike of {code} errors.",
    ],
    "correction": [
        "The {service} service listens on port {port}, not {port2} as assumed earlier.",
        "{person} owns the {service} service now; {person2} moved to {service2}.",
        "The {service} tests run with {tool}, not {tool2}.",
        "Error {code} means the {service} quota was exceeded, not a network failure.",
    ],
    "fact": [
        "The {service} service runs on port {port} in {environment}.",
        "The {service} database is {tool} version {version}.",
        "{person} is the on-call engineer for {service} during week {week}.",
        "Error {code} from {service} means the upstream {service2} call timed out.",
        "The {service} service is written in {language} and deployed with {tool}.",
        "Releases of {service} are cut every {day} at {hour}:00 UTC.",
        "The {service} ledger keeps amounts as integers in cents.",
        "Ticket {ticket} tracks the migration of {service} to {tool}.",
    ],
    "instruction": [
        "Always run {tool} before committing changes to {service}.",
        "Never push directly to main in the {service} repository.",
        "Ask {person} before changing the {service} schema.",
        "Use {environment} to test {service} changes before release.",
    ],
    "convention": [
        "{language} modules in {service} are named in snake_case.",
        "Feature branches are named after the ticket, like {ticket}-short-description.",
        "Environment variables of {service} start with {prefix}_.",
        "Database migrations of {service} live in db/migrations and are never edited.",
    ],
}
SCOPES = ["user", "user", "project"]


@dataclass(frozen=True)
class Synthetic:
    actor: int
    project: int
    category: str
    scope: str
    content: str


def _fill(template: str, rng: random.Random, serial: int) -> str:
    service, service2 = rng.sample(SERVICES, 2)
    tool, tool2 = rng.sample(TOOLS, 2)
    person, person2 = rng.sample(PEOPLE, 2)
    port, port2 = rng.sample(range(3000, 9999), 2)
    text = template.format(
        service=service,
        service2=service2,
        tool=tool,
        tool2=tool2,
        person=person,
        person2=person2,
        language=rng.choice(LANGUAGES),
        port=port,
        port2=port2,
        environment=rng.choice(ENVIRONMENTS),
        version=f"{rng.randint(1, 17)}.{rng.randint(0, 9)}",
        week=rng.randint(1, 52),
        code=f"E{rng.randint(1000, 9999)}",
        day=rng.choice(DAYS),
        hour=rng.randint(6, 20),
        ticket=f"{service[:3].upper()}-{rng.randint(100, 9999)}",
        prefix=service.upper(),
    )
    # a serial keeps every text distinct, the way real memories are
    return f"{text} (note {serial})" if serial % 3 else f"In project {serial % 97}, {text}"


def memories(
    count: int, actors: int, projects_per_actor: int = 3, seed: int = 7
) -> Iterator[Synthetic]:
    rng = random.Random(seed)
    categories = list(TEMPLATES)
    for serial in range(count):
        category = categories[serial % len(categories)]
        template = rng.choice(TEMPLATES[category])
        actor = serial % actors
        yield Synthetic(
            actor=actor,
            project=rng.randrange(projects_per_actor),
            category=category,
            scope=rng.choice(SCOPES),
            content=_fill(template, rng, serial),
        )


def queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    shapes = [
        "which port does {service} use",
        "who is on call for {service}",
        "how are {service} releases scheduled",
        "what does error E{code} mean",
        "{tool} preferences",
        "naming conventions in {language}",
        "how to test {service} changes",
        "who owns {service}",
    ]
    return [
        rng.choice(shapes).format(
            service=rng.choice(SERVICES),
            code=rng.randint(1000, 9999),
            tool=rng.choice(TOOLS),
            language=rng.choice(LANGUAGES),
        )
        for _ in range(count)
    ]
