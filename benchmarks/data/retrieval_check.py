"""Validate benchmarks/data/retrieval.json, the labeled retrieval benchmark of emergent-memory.

Run from anywhere with Python 3.11+ (standard library only):

    python benchmarks/data/retrieval_check.py [path/to/retrieval.json]

Prints a summary (counts per kind, category, scope, ...) and every violation found, and exits
with status 1 if there is any violation, 0 otherwise.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "retrieval.json"

CATEGORIES = ("preference", "pattern", "correction", "fact", "instruction", "convention")
SOURCES = ("explicit", "inferred", "corrected")
SCOPES = ("user", "project", "global")
KIND_MINIMUMS = {
    "paraphrase": 60,
    "keyword": 25,
    "identifier": 25,
    "name": 15,
    "number_date": 15,
    "category_filter": 15,
    "scope_filter": 10,
    "superseded": 25,
    "other_user": 15,
    "mixed": 0,  # "the rest"
}
MIN_USERS = 10
MIN_MEMORIES = 450
MIN_PER_CATEGORY = 30
GLOBAL_RANGE = (6, 10)
MIN_SUPERSEDED_PAIRS = 25
MIN_QUERIES = 220
MEMORY_WORDS = (8, 40)
QUERY_WORDS = (2, 12)
PARAPHRASE_MAX_SHARED = 1
KEYWORD_MIN_SHARED = 2
OTHER_USER_MIN_SHARED = 2

USER_KEY = re.compile(r"^u[1-9][0-9]*$")
PROJECT_KEY = re.compile(r"^p[1-9][0-9]*$")
MEMORY_KEY = re.compile(r"^m[0-9]{3,}$")
QUERY_KEY = re.compile(r"^q[0-9]{3,}$")

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "much",
        "must",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "onto",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "per",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "use",
        "used",
        "uses",
        "using",
        "very",
        "via",
        "vs",
        "versus",
        "was",
        "we",
        "were",
        "what",
        "whats",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yet",
        "you",
        "your",
        "yours",
        "s",
        "t",
        "e",
        "g",
        "eg",
        "ie",
        "etc",
    ]
)
TOKEN = re.compile(r"[a-z0-9]+")
# A query word that looks like an identifier: an error code, snake_case, a flag, a path, ...
IDENTIFIER_SHAPE = re.compile(r"[0-9_@/.:=-]|[a-z][A-Z]|^[A-Z0-9]{3,}$")


def stem(token: str) -> str:
    """A deliberately crude stemmer, good enough to see that 'deploys' and 'deployed' agree."""
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", "")):
        if token.endswith(suffix) and len(token) > len(suffix) + 2:
            token = token[: -len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(token) > 2 and token[-1] == token[-2]:
                token = token[:-1]  # logging -> logg -> log, planned -> plann -> plan
            break
    else:
        if token.endswith(("sses", "xes", "zes", "ches", "shes")) and len(token) > 4:
            token = token[:-2]
        elif token.endswith("s") and not token.endswith(("ss", "us", "is")) and len(token) > 3:
            token = token[:-1]
    if token.endswith("e") and len(token) > 3:
        token = token[:-1]  # change/changing/changes -> chang
    return token


def content_stems(text: str) -> set[str]:
    """The stems of the words of a text that carry meaning (stopwords and 1-letter tokens out)."""
    words = TOKEN.findall(text.lower().replace("'s ", " ").replace("\u2019s ", " "))
    return {stem(w) for w in words if len(w) > 1 and w not in STOPWORDS}


def word_count(text: str) -> int:
    return len(text.split())


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_PATH
    errors: list[str] = []

    def error(message: str) -> None:
        errors.append(message)

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot load {path}: {exc}")
        return 1

    # ------------------------------------------------------------------ top level
    if not isinstance(data, dict):
        print("the top level must be a JSON object")
        return 1
    expected_top = {"description", "users", "memories", "queries"}
    if set(data) != expected_top:
        error(f"top-level keys must be exactly {sorted(expected_top)}, got {sorted(data)}")
    if not isinstance(data.get("description"), str) or not data.get("description", "").strip():
        error("description must be a non-empty string")
    users = data.get("users") or []
    memories = data.get("memories") or []
    queries = data.get("queries") or []
    if not all(isinstance(x, list) for x in (users, memories, queries)):
        print("users, memories and queries must be lists")
        return 1

    # ------------------------------------------------------------------ users and projects
    user_projects: dict[str, list[str]] = {}
    project_owner: dict[str, str] = {}
    for n, user in enumerate(users):
        where = f"users[{n}]"
        if not isinstance(user, dict) or set(user) != {"key", "name", "projects"}:
            error(f"{where}: must have exactly the fields key, name, projects")
            continue
        key = user["key"]
        if not isinstance(key, str) or not USER_KEY.match(key):
            error(f"{where}: bad user key {key!r}")
            continue
        if key in user_projects:
            error(f"{where}: duplicate user key {key}")
        if not isinstance(user["name"], str) or len(user["name"].split()) < 2:
            error(f"{key}: name must be a full name")
        projects = user["projects"]
        if not isinstance(projects, list) or not 2 <= len(projects) <= 3:
            error(f"{key}: must have 2-3 projects, has {projects!r}")
            projects = projects if isinstance(projects, list) else []
        user_projects[key] = projects
        for project in projects:
            if not isinstance(project, str) or not PROJECT_KEY.match(project):
                error(f"{key}: bad project key {project!r}")
            elif project in project_owner:
                error(f"project {project} belongs to both {project_owner[project]} and {key}")
            else:
                project_owner[project] = key
    if len(user_projects) < MIN_USERS:
        error(f"need at least {MIN_USERS} users, have {len(user_projects)}")
    expected_users = [f"u{i}" for i in range(1, len(users) + 1)]
    if [u.get("key") for u in users if isinstance(u, dict)] != expected_users:
        error(f"user keys must be {expected_users[0]}..{expected_users[-1]} in order")

    # ------------------------------------------------------------------ memories
    memory_fields = {
        "key",
        "user",
        "project",
        "scope",
        "category",
        "source",
        "content",
        "superseded_by",
    }
    by_key: dict[str, dict] = {}
    seen_content: dict[str, str] = {}
    for n, memory in enumerate(memories):
        where = f"memories[{n}]"
        if not isinstance(memory, dict) or set(memory) != memory_fields:
            error(f"{where}: must have exactly the fields {sorted(memory_fields)}")
            continue
        key = memory["key"]
        if not isinstance(key, str) or not MEMORY_KEY.match(key):
            error(f"{where}: bad memory key {key!r}")
            continue
        if key != f"m{n + 1:03d}":
            error(f"{where}: key {key} out of sequence (expected m{n + 1:03d})")
        if key in by_key:
            error(f"{key}: duplicate memory key")
        by_key[key] = memory
        if memory["user"] not in user_projects:
            error(f"{key}: unknown user {memory['user']!r}")
        elif project_owner.get(memory["project"]) != memory["user"]:
            error(f"{key}: project {memory['project']!r} is not a project of {memory['user']}")
        if memory["scope"] not in SCOPES:
            error(f"{key}: bad scope {memory['scope']!r}")
        if memory["category"] not in CATEGORIES:
            error(f"{key}: bad category {memory['category']!r}")
        if memory["source"] not in SOURCES:
            error(f"{key}: bad source {memory['source']!r}")
        text = memory["content"]
        if not isinstance(text, str) or text != text.strip() or not text:
            error(f"{key}: content must be a non-empty trimmed string")
            continue
        words = word_count(text)
        if not MEMORY_WORDS[0] <= words <= MEMORY_WORDS[1]:
            error(
                f"{key}: content has {words} words, must have {MEMORY_WORDS[0]}-{MEMORY_WORDS[1]}"
            )
        normal = " ".join(text.lower().split())
        if normal in seen_content:
            error(f"{key}: same content as {seen_content[normal]}")
        seen_content[normal] = key

    # superseded pairs
    superseded_targets: dict[str, str] = {}  # new key -> old key
    for key, memory in by_key.items():
        new_key = memory["superseded_by"]
        if new_key is None:
            continue
        new = by_key.get(new_key) if isinstance(new_key, str) else None
        if new is None:
            error(f"{key}: superseded_by {new_key!r} is not a memory")
            continue
        if new_key == key:
            error(f"{key}: superseded by itself")
        for field in ("user", "project", "scope"):
            if new[field] != memory[field]:
                error(
                    f"{key}: superseded by {new_key} with a different {field} "
                    f"({memory[field]} vs {new[field]})"
                )
        if new["superseded_by"] is not None:
            error(f"{key}: superseded by {new_key}, which is itself superseded")
        if new_key in superseded_targets:
            error(f"{new_key}: supersedes both {superseded_targets[new_key]} and {key}")
        superseded_targets[new_key] = key
    pairs = len(superseded_targets)
    if pairs < MIN_SUPERSEDED_PAIRS:
        error(f"need at least {MIN_SUPERSEDED_PAIRS} superseded pairs, have {pairs}")

    # counts of memories
    if len(by_key) < MIN_MEMORIES:
        error(f"need at least {MIN_MEMORIES} memories, have {len(by_key)}")
    category_counts = Counter(m["category"] for m in by_key.values())
    for category in CATEGORIES:
        if category_counts[category] < MIN_PER_CATEGORY:
            error(
                f"category {category}: {category_counts[category]} memories, "
                f"need at least {MIN_PER_CATEGORY}"
            )
    scope_counts = Counter(m["scope"] for m in by_key.values())
    source_counts = Counter(m["source"] for m in by_key.values())
    globals_ = [m for m in by_key.values() if m["scope"] == "global"]
    if not GLOBAL_RANGE[0] <= len(globals_) <= GLOBAL_RANGE[1]:
        error(f"need {GLOBAL_RANGE[0]}-{GLOBAL_RANGE[1]} global memories, have {len(globals_)}")
    global_authors = {m["user"] for m in globals_}
    if len(global_authors) > 1:
        error(f"global memories must come from a single admin user, got {sorted(global_authors)}")
    for user in user_projects:
        if not any(m["user"] == user and m["scope"] == "user" for m in by_key.values()):
            error(f"{user}: has no user-scope memory")
        for project in user_projects[user]:
            if not any(
                m["project"] == project and m["scope"] == "project" for m in by_key.values()
            ):
                error(f"{user}: project {project} has no project-scope memory")

    def visible(memory: dict, user: str, project: str) -> bool:
        if memory["scope"] == "global":
            return True
        if memory["user"] != user:
            return False
        return memory["scope"] == "user" or memory["project"] == project

    def current(memory: dict) -> bool:
        return memory["superseded_by"] is None

    stems = {key: content_stems(m["content"]) for key, m in by_key.items()}

    # ------------------------------------------------------------------ queries
    query_fields = {"key", "user", "project", "query", "relevant", "category", "scope", "kind"}
    kind_counts: Counter[str] = Counter()
    relevant_sizes: Counter[int] = Counter()
    query_texts: dict[tuple[str, str, str], str] = {}
    for n, query in enumerate(queries):
        where = f"queries[{n}]"
        if not isinstance(query, dict) or set(query) != query_fields:
            error(f"{where}: must have exactly the fields {sorted(query_fields)}")
            continue
        key = query["key"]
        if not isinstance(key, str) or not QUERY_KEY.match(key):
            error(f"{where}: bad query key {key!r}")
            continue
        if key != f"q{n + 1:03d}":
            error(f"{where}: key {key} out of sequence (expected q{n + 1:03d})")
        user, project, text, kind = query["user"], query["project"], query["query"], query["kind"]
        if user not in user_projects:
            error(f"{key}: unknown user {user!r}")
            continue
        if project_owner.get(project) != user:
            error(f"{key}: project {project!r} is not a project of {user}")
            continue
        if kind not in KIND_MINIMUMS:
            error(f"{key}: bad kind {kind!r}")
            continue
        kind_counts[kind] += 1
        if not isinstance(text, str) or not text.strip():
            error(f"{key}: empty query")
            continue
        words = word_count(text)
        if not QUERY_WORDS[0] <= words <= QUERY_WORDS[1]:
            error(f"{key}: query has {words} words, must have {QUERY_WORDS[0]}-{QUERY_WORDS[1]}")
        signature = (user, project, " ".join(text.lower().split()))
        if signature in query_texts:
            error(f"{key}: same query, user and project as {query_texts[signature]}")
        query_texts[signature] = key
        category, scope = query["category"], query["scope"]
        if category is not None and category not in CATEGORIES:
            error(f"{key}: bad category filter {category!r}")
        if scope is not None and scope not in SCOPES:
            error(f"{key}: bad scope filter {scope!r}")
        relevant = query["relevant"]
        if not isinstance(relevant, list) or len(set(relevant)) != len(relevant):
            error(f"{key}: relevant must be a list of distinct memory keys")
            continue
        relevant_sizes[len(relevant)] += 1
        rel: list[dict] = []
        for memory_key in relevant:
            memory = by_key.get(memory_key)
            if memory is None:
                error(f"{key}: relevant {memory_key!r} is not a memory")
                continue
            rel.append(memory)
            if not visible(memory, user, project):
                error(f"{key}: relevant {memory_key} is not visible to {user} in {project}")
            if not current(memory):
                error(f"{key}: relevant {memory_key} is superseded by {memory['superseded_by']}")
            if category is not None and memory["category"] != category:
                error(
                    f"{key}: relevant {memory_key} has category {memory['category']}, "
                    f"the query filters on {category}"
                )
            if scope is not None and memory["scope"] != scope:
                error(
                    f"{key}: relevant {memory_key} has scope {memory['scope']}, "
                    f"the query filters on {scope}"
                )
        if len(rel) != len(relevant):
            continue
        if kind == "other_user":
            if relevant:
                error(f"{key}: other_user queries must have no relevant memory")
        elif not relevant:
            error(f"{key}: a {kind} query needs at least one relevant memory")
        elif len(relevant) > 3:
            error(f"{key}: at most 3 relevant memories, has {len(relevant)}")
        if kind not in ("category_filter",) and category is not None and kind != "mixed":
            error(f"{key}: only category_filter (or mixed) queries set a category")
        if kind not in ("scope_filter",) and scope is not None and kind != "mixed":
            error(f"{key}: only scope_filter (or mixed) queries set a scope")

        q_stems = content_stems(text)
        # visible, current memories that could compete with the relevant ones
        candidates = [
            m
            for m in by_key.values()
            if visible(m, user, project) and current(m) and m["key"] not in relevant
        ]

        def same_topic(memory: dict, q_stems: set = q_stems, rel: list = rel) -> bool:
            """Shares a content word with the query, or two with a relevant memory."""
            s = stems[memory["key"]]
            return bool(s & q_stems) or any(len(s & stems[r["key"]]) >= 2 for r in rel)

        if kind == "paraphrase":
            for memory in rel:
                shared = q_stems & stems[memory["key"]]
                if len(shared) > PARAPHRASE_MAX_SHARED:
                    error(
                        f"{key}: paraphrase shares {len(shared)} words with {memory['key']}: "
                        f"{sorted(shared)}"
                    )
        elif kind == "keyword":
            if not any(len(q_stems & stems[m["key"]]) >= KEYWORD_MIN_SHARED for m in rel):
                error(
                    f"{key}: keyword query shares fewer than {KEYWORD_MIN_SHARED} words "
                    "with its relevant memory"
                )
        elif kind == "identifier":
            idents = [w.strip("`'\"?,()") for w in text.split()]
            idents = [w for w in idents if w and IDENTIFIER_SHAPE.search(w)]
            if not any(w.lower() in m["content"].lower() for w in idents for m in rel):
                error(f"{key}: identifier query has no identifier found in its relevant memory")
        elif kind == "name":
            names = [w.strip("?,.'\"") for w in text.split()]
            names = [w for w in names if w[:1].isupper()]
            if not any(w in m["content"] for w in names for m in rel):
                error(f"{key}: name query names nothing that its relevant memory mentions")
        elif kind == "number_date":
            if not all(re.search(r"[0-9]", m["content"]) for m in rel):
                error(f"{key}: number_date query whose relevant memory holds no number or date")
        elif kind == "category_filter":
            if category is None:
                error(f"{key}: category_filter query without a category")
            elif not any(m["category"] != category and same_topic(m) for m in candidates):
                error(f"{key}: no other visible memory on the topic with another category")
        elif kind == "scope_filter":
            if scope is None:
                error(f"{key}: scope_filter query without a scope")
            elif not any(m["scope"] != scope and same_topic(m) for m in candidates):
                error(f"{key}: no other visible memory on the topic with another scope")
        elif kind == "superseded":
            for memory in rel:
                old_key = superseded_targets.get(memory["key"])
                if old_key is None:
                    error(
                        f"{key}: superseded query whose relevant {memory['key']} supersedes nothing"
                    )
                elif not (q_stems & (stems[old_key] | stems[memory["key"]])):
                    error(
                        f"{key}: superseded query shares no word with {old_key} or {memory['key']}"
                    )
        elif kind == "other_user":
            foreign = [
                m for m in by_key.values() if m["user"] != user and not visible(m, user, project)
            ]
            best_foreign = max((len(q_stems & stems[m["key"]]) for m in foreign), default=0)
            best_own = max(
                (
                    len(q_stems & stems[m["key"]])
                    for m in by_key.values()
                    if visible(m, user, project) and current(m)
                ),
                default=0,
            )
            if best_foreign < OTHER_USER_MIN_SHARED:
                error(
                    f"{key}: other_user query matches no other user's memory well "
                    f"(best overlap {best_foreign} words)"
                )
            elif best_own >= best_foreign:
                error(
                    f"{key}: other_user query matches a visible memory as well as another "
                    f"user's ({best_own} vs {best_foreign} shared words)"
                )

    for kind, minimum in KIND_MINIMUMS.items():
        if kind_counts[kind] < minimum:
            error(f"kind {kind}: {kind_counts[kind]} queries, need at least {minimum}")
    if len(queries) < MIN_QUERIES:
        error(f"need at least {MIN_QUERIES} queries, have {len(queries)}")
    relevant_to_someone = {
        k for q in queries if isinstance(q, dict) for k in q.get("relevant") or []
    }

    # ------------------------------------------------------------------ summary
    def show(title: str, counter: Counter, order: tuple | list | None = None) -> None:
        keys = list(order) if order is not None else sorted(counter)
        print(f"{title}: " + ", ".join(f"{k} {counter[k]}" for k in keys))

    print(f"file: {path}")
    print(f"users: {len(user_projects)}, projects: {len(project_owner)}")
    print(
        f"memories: {len(by_key)} ({len(by_key) - pairs} current, {pairs} superseded pairs), "
        f"{len(relevant_to_someone)} relevant to at least one query"
    )
    show("  per category", category_counts, CATEGORIES)
    show("  per scope", scope_counts, SCOPES)
    show("  per source", source_counts, SOURCES)
    show("  per user", Counter(m["user"] for m in by_key.values()), list(user_projects))
    print(f"queries: {len(queries)}")
    show("  per kind", kind_counts, tuple(KIND_MINIMUMS))
    show(
        "  per category filter",
        Counter(q["category"] for q in queries if isinstance(q, dict) and q.get("category")),
        CATEGORIES,
    )
    show(
        "  per scope filter",
        Counter(q["scope"] for q in queries if isinstance(q, dict) and q.get("scope")),
        SCOPES,
    )
    show("  per number of relevant memories", relevant_sizes)
    show(
        "  per user",
        Counter(q["user"] for q in queries if isinstance(q, dict)),
        list(user_projects),
    )
    if errors:
        print(f"\n{len(errors)} violation(s):")
        for message in errors:
            print(f"  - {message}")
        return 1
    print("\nOK: every rule holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
