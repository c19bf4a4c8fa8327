"""The composition root: settings -> database -> pools -> embedder -> services."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from psycopg_pool import ConnectionPool

from emergent_memory.db import migrate as migrations
from emergent_memory.db.connection import Database, connect, open_database, with_role
from emergent_memory.db.pool import create_pool, quick_transaction
from emergent_memory.db.roles import EMBEDDED_SERVER_ROLE, ensure_login_role
from emergent_memory.embeddings.base import EmbeddingProvider
from emergent_memory.embeddings.compatibility import check_compatible
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.graph import bypasses_row_security
from emergent_memory.memory import relevance
from emergent_memory.memory.dedup import DedupPolicy
from emergent_memory.memory.dedup_learned import LearnedReading
from emergent_memory.memory.service import MemoryConfig, MemoryService
from emergent_memory.memory.store import EMBEDDED_TEXT
from emergent_memory.memory.verify_rules import VerifyPolicy
from emergent_memory.settings import Settings

# The services and workers each path uses are imported where it opens them: a command that
# recalls does not import capture, the dashboard or the LLM client.
if TYPE_CHECKING:
    from emergent_memory.auth.dashboard import DashboardLinks, DashboardSessions
    from emergent_memory.auth.service import TokenService
    from emergent_memory.embeddings.worker import EmbeddingWorker, WorkerConfig
    from emergent_memory.llm import AnthropicClient
    from emergent_memory.memory.auto_memory_import import AutoMemoryImport
    from emergent_memory.memory.browse import BrowseService
    from emergent_memory.memory.capture import CaptureConfig, CaptureService
    from emergent_memory.memory.capture_admin import CaptureAdmin
    from emergent_memory.memory.capture_worker import CaptureWorker
    from emergent_memory.memory.dedup_judge import DedupJudge
    from emergent_memory.memory.duplicates import DuplicateService
    from emergent_memory.memory.injection import InjectionConfig, InjectionService
    from emergent_memory.memory.lifecycle import ArchiveConfig, ArchiveJob, LifecycleService
    from emergent_memory.memory.maintenance import MaintenanceService
    from emergent_memory.memory.project_names import ProjectNames
    from emergent_memory.memory.verify import VerifyService

logger = logging.getLogger(__name__)

# When a new memory supersedes the most similar existing one, per embedding model
# (emergent_memory/memory/dedup.py). all-MiniLM-L6-v2: calibrated on the labelled pairs of
# benchmarks/data/dedup_pairs.json (benchmarks/results/dedup.md), 5-fold cross-validated with
# the target of no distinct fact superseded: the value, holder, subject and script rules veto,
# then a similarity of at least `threshold`, or `text_rule_from` with a change marker or every
# word kept, or `named_change_from` with a change that names old and new values, supersedes;
# `change_from` (below all of these) with a stated change that keeps the subject's words;
# `reworded_from` (within text_rule_from's band) with one word exchanged for another,
# measured on every spent set's pairs and the store's nearest pairs (benchmarks/README.md
# section 3, stop 43); `role_from` (below change_from) where another holder of a role of one
# holder is still read (dedup.role_given_to_another: section 3, stop 91).
# `threshold` (similarity alone supersedes) is the one benchmarks/dedup_chat.py chooses on the
# agent memories of the labelled set and of every held-out set spent before it
# (AGENT_DEVELOPMENT: the lowest value at which the similarity adds no wrong supersession);
# the bands below it are the ones benchmarks/dedup.py chooses on the labelled set, but
# `change_from`, measured on every spent set's pairs and on the nearest memories of a store
# of their texts (benchmarks/dedup_chat.py, stated_change);
# `labelled_from` (two chat turns of one speaker) the one benchmarks/dedup_chat.py chooses on
# the chat turns of the labelled set and of the held-out sets spent before it (DEVELOPMENT).
# benchmarks/README.md section 3 has the sets, the folds and the counts.
DEDUP_POLICIES = {
    LOCAL_MODEL_NAME: DedupPolicy(
        threshold=0.95,
        text_rule_from=0.64,
        named_change_from=0.60,
        latin_only_model=True,
        labelled_from=1.0,
        change_from=0.40,
        reworded_from=0.85,
        # who holds a role, held by another, read from here up (benchmarks/README.md,
        # section 3: the lifecycle's on-call changes at 0.32-0.39)
        role_from=0.30,
        # a pair the rules keep for want of evidence, read by a model fitted on the labelled
        # pairs (memory/dedup_learned.py; benchmarks/README.md, section 3)
        learned=LearnedReading("dedup_learned.json"),
    )
}
# For a model nobody calibrated: the text rules (which do not depend on the model) and a high
# similarity; nothing is superseded below it.
UNCALIBRATED_DEDUP_THRESHOLD = 0.98


def build_embedder(settings: Settings) -> EmbeddingProvider:
    if settings.embedding_provider == "local":
        return LocalEmbeddings(
            runtime=settings.local_runtime,
            cache_dir=settings.model_cache_dir,
            source=settings.local_model_source,
            hub_url=settings.model_hub_url,
        )
    from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings  # httpx with it

    # both are required with the openai provider (Settings checks it)
    assert settings.embedding_model is not None
    assert settings.embedding_dimensions is not None
    api_key = settings.embedding_api_key
    return OpenAICompatibleEmbeddings(
        base_url=settings.embedding_base_url,
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        api_key=None if api_key is None else api_key.get_secret_value(),
        query_prefix=settings.embedding_query_prefix,
        document_prefix=settings.embedding_document_prefix,
        timeout=settings.embedding_timeout,
        max_retries=settings.embedding_max_retries,
        send_dimensions=settings.embedding_send_dimensions,
    )


def injection_config(settings: Settings, model_name: str) -> InjectionConfig:
    """Injection's configuration: the relevance floor of a prompt's memories is the one
    calibrated for the embedding model (memory/relevance.py: precision first, at least 80% of
    what is injected relevant on the labelled prompt sets), unless
    EMERGENT_MEMORY_INJECTION_RELEVANCE_FLOOR sets another. An irrelevant injection costs the
    user's context; what the floor keeps out the agent can still recall."""
    from emergent_memory.memory.injection import InjectionConfig

    recall = memory_config(settings, model_name)
    floor = settings.injection_relevance_floor
    if floor is None:
        floor = recall.relevance.injection_floor
    return InjectionConfig(
        budget_tokens=settings.injection_budget_tokens,
        min_prompt_words=settings.injection_min_prompt_words,
        relevance_floor=floor,
        max_prompt_length=settings.max_content_length,
        recall_tuning=recall.recall_tuning,
        decay=recall.decay,
        relevance=recall.relevance,
        fusion=recall.fusion,
        log_retention=settings.injection_log_retention_days * 86400.0,
    )


def dedup_policy(settings: Settings, model_name: str) -> DedupPolicy:
    """The model's calibrated policy, or a plain threshold for a model nobody calibrated;
    EMERGENT_MEMORY_DEDUP_THRESHOLD replaces the (high) threshold of either (the bands below
    it are kept, but never above it)."""
    policy = DEDUP_POLICIES.get(model_name, DedupPolicy.plain(UNCALIBRATED_DEDUP_THRESHOLD))
    threshold = settings.dedup_threshold
    if threshold is None:
        return policy
    low = None if policy.text_rule_from is None else min(policy.text_rule_from, threshold)
    named = (
        None
        if policy.named_change_from is None or low is None
        else min(policy.named_change_from, low)
    )
    lowest = named if named is not None else low
    change = (
        None if policy.change_from is None or lowest is None else min(policy.change_from, lowest)
    )
    role = None if policy.role_from is None or change is None else min(policy.role_from, change)
    return replace(
        policy,
        threshold=threshold,
        text_rule_from=low,
        named_change_from=named,
        change_from=change,
        role_from=role,
    )


def memory_config(settings: Settings, model_name: str) -> MemoryConfig:
    """The service's configuration. Recall returns memories of the relevance calibrated for
    the embedding model (memory/relevance.py; none for a model nobody calibrated) unless
    EMERGENT_MEMORY_RECALL_MIN_RELEVANCE sets another."""
    policy = dedup_policy(settings, model_name)
    model, calibrated = relevance.model_for(model_name)
    floor = settings.recall_min_relevance
    if floor is None:
        floor = model.recall_floor if calibrated else 0.0
    return MemoryConfig(
        **MemoryConfig.dedup_fields(policy),
        max_content_length=settings.max_content_length,
        recall_candidates=settings.recall_candidates,
        recall_rrf_k=settings.recall_rrf_k,
        recall_lexical_weight=settings.recall_lexical_weight,
        recall_vector_weight=settings.recall_vector_weight,
        recall_confidence_weight=settings.recall_confidence_weight,
        recall_min_similarity=settings.recall_min_similarity,
        recall_recency_weight=settings.recall_recency_weight,
        recall_importance_weight=settings.recall_importance_weight,
        decay_floor=settings.decay_floor,
        decay_grace_days=settings.decay_grace_days,
        decay_half_life_days=settings.decay_half_life_days,
        relevance=model,
        recall_min_relevance=floor,
    )


# seconds: a save in the judge's band waits for its answer (and an agent for the save)
DEDUP_JUDGE_TIMEOUT = 20.0


def dedup_judge(settings: Settings) -> DedupJudge | None:
    """The save's LLM judge (memory/dedup_judge.py): with an Anthropic key, unless turned
    off; capture's gate model and daily budget, a shorter timeout and one retry. Its client
    is made on its first question."""
    key = settings.anthropic_api_key
    if key is None or not settings.dedup_judge:
        return None
    from emergent_memory.memory.dedup_judge import DedupJudge, DedupJudgeConfig

    return DedupJudge(
        DedupJudgeConfig(
            api_key=key.get_secret_value(),
            base_url=settings.anthropic_base_url,
            model=settings.capture_gate_model,
            daily_token_budget=settings.capture_daily_token_budget,
            timeout=min(settings.llm_timeout, DEDUP_JUDGE_TIMEOUT),
            max_retries=min(settings.llm_max_retries, 1),
        )
    )


@contextmanager
def open_memory_service(
    settings: Settings,
    *,
    migrate: bool | None = None,
    embedder: EmbeddingProvider | None = None,
    load_model: Literal["now", "background", "lazily"] = "now",
    role: Literal["app", "owner"] = "app",
) -> Iterator[MemoryService]:
    """Everything a server or command needs, opened once and closed in reverse order.

    Refuses a database that is not at the schema head (unless `migrate`; None: the caller has
    no --migrate option for the refusal to suggest) and an embedding
    model whose vectors do not fit it. The local model is loaded off the request path: here
    ("now"), in a thread started before the database opens, while the caller goes on
    ("background": a request that needs it waits, at most LocalEmbeddings' LOAD_WAIT_SECONDS),
    or on first use ("lazily", for commands that may not embed at all).

    `role`: on the embedded server, "app" connects the pool as the login role
    emergent_memory_server (a member of emergent_memory_app, subject to row-level security)
    and "owner" as the superuser, for maintenance that sees every row (re-embedding). With a
    configured URL both use it as given; "app" warns when that role bypasses row-level
    security, since isolation then rests on the application's queries alone.

    With EMERGENT_MEMORY_READ_DATABASE_URL, a second pool on the read replica, as the same
    role, serves the service's reads (db/replica.py: the primary while the replica is down or
    lags); it does not wait for the replica to start.
    """
    from emergent_memory.db.replica import create_replica_pool

    embedder = embedder or build_embedder(settings)
    if isinstance(embedder, LocalEmbeddings) and load_model == "background":
        embedder.load_in_background()  # while the database starts and its schema is checked
    with open_database(settings.database_url, settings.data_dir) as db:
        migrations.require_current_schema(db.url, migrate=migrate)
        with connect(db.url) as conn:
            check_compatible(conn, embedder, EMBEDDED_TEXT)
        pool_url = db.url
        if role == "app" and db.embedded:
            ensure_login_role(db.url, EMBEDDED_SERVER_ROLE)
            pool_url = with_role(db.url, EMBEDDED_SERVER_ROLE)
        elif role == "app":
            with connect(db.url) as conn:
                if bypasses_row_security(conn):
                    logger.warning(
                        "the database role %s bypasses row-level security (superuser, "
                        "BYPASSRLS or emergent_memory_admin): connect the server as a member "
                        "of emergent_memory_app (docs/security.md)",
                        conn.info.user,
                    )
        if isinstance(embedder, LocalEmbeddings) and load_model == "now":
            embedder.load()
        pool = create_pool(
            pool_url,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            timeout=settings.pool_timeout,
            # a request that finds the embedded server gone starts it again
            restart=None if db.server is None else db.server.restart_if_stopped,
        )
        read_pool = None
        judge = None
        try:
            if settings.read_database_url:  # a read replica, as the same role
                read_url = settings.read_database_url
                if pool_url != db.url:
                    read_url = with_role(read_url, EMBEDDED_SERVER_ROLE)
                read_pool = create_replica_pool(
                    read_url,
                    primary=pool,
                    max_lag=settings.read_max_lag_seconds,
                    min_size=settings.pool_min_size,
                    max_size=settings.pool_max_size,
                    timeout=settings.pool_timeout,
                )
            config = memory_config(settings, embedder.model_name)
            judge = dedup_judge(settings)
            yield MemoryService(pool, embedder, config, read_pool=read_pool, judge=judge)
        finally:
            if judge is not None:
                judge.close()
            if read_pool is not None:
                read_pool.close()
            pool.close()
            close = getattr(embedder, "close", None)
            if callable(close):
                close()


@contextmanager
def open_auto_memory_import(
    settings: Settings, *, migrate: bool | None = None
) -> Iterator[AutoMemoryImport]:
    """The import of Claude Code's auto memory (`import --from claude-code`), on the memory
    service it saves through. `migrate` as for open_memory_service."""
    from emergent_memory.memory.auto_memory_import import AutoMemoryImport

    with open_memory_service(settings, migrate=migrate) as memory:
        yield AutoMemoryImport(memory.pool, memory)


def worker_config(settings: Settings) -> WorkerConfig:
    from emergent_memory.embeddings.worker import WorkerConfig

    return WorkerConfig(
        batch_size=settings.worker_batch_size,
        max_attempts=settings.worker_max_attempts,
        backoff_base=settings.worker_backoff_base_seconds,
        backoff_max=settings.worker_backoff_max_seconds,
        lock_timeout=settings.worker_lock_timeout_seconds,
    )


@contextmanager
def _service_and_worker(
    settings: Settings,
    embedder: EmbeddingProvider | None,
    load_model: Literal["now", "background", "lazily"],
    migrate: bool | None = None,
) -> Iterator[tuple[MemoryService, EmbeddingWorker]]:
    """The service and an embedding worker sharing its pool (the application role: the
    worker acts for each job's owner under row-level security) and its embedder."""
    from emergent_memory.embeddings.worker import EmbeddingWorker

    embedder = embedder or build_embedder(settings)
    with open_memory_service(
        settings, migrate=migrate, embedder=embedder, load_model=load_model
    ) as service:
        worker = EmbeddingWorker(
            service.pool, embedder, worker_config(settings), embedded_text=EMBEDDED_TEXT
        )
        yield service, worker


@contextmanager
def open_memory_service_with_worker(
    settings: Settings,
    *,
    migrate: bool | None = None,
    embedder: EmbeddingProvider | None = None,
    load_model: Literal["now", "background", "lazily"] = "background",
) -> Iterator[MemoryService]:
    """The service, with its embedding worker in a background thread, and the archive job in
    another (when it is on); they stop (finishing their round or batch) before the service
    closes. `migrate` as for open_memory_service."""
    with (
        _service_and_worker(settings, embedder, load_model, migrate) as (service, worker),
        worker.running_in_thread(settings.worker_poll_interval_seconds),
        _archive_in_thread(settings),
    ):
        yield service


def build_llm(settings: Settings) -> AnthropicClient | None:
    """The Anthropic client of automatic capture; None (capture off) without an API key."""
    from emergent_memory.llm import AnthropicClient

    key = settings.anthropic_api_key
    if key is None:
        return None
    return AnthropicClient(
        api_key=key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        deadline=settings.llm_deadline,
    )


def capture_config(settings: Settings) -> CaptureConfig:
    """Capture's settings; its worker backs off like the embedding worker, and holds a window
    at least as long as its two model calls may take (their deadlines)."""
    from emergent_memory.memory.capture import CaptureConfig

    calls = 2 * settings.llm_deadline
    return CaptureConfig(
        gate_model=settings.capture_gate_model,
        extractor_model=settings.capture_extractor_model,
        window_turns=settings.capture_window_turns,
        window_overlap=settings.capture_window_overlap,
        tool_output_chars=settings.capture_tool_output_chars,
        daily_token_budget=settings.capture_daily_token_budget,
        idle_seconds=settings.capture_idle_seconds,
        max_attempts=settings.capture_max_attempts,
        backoff_base=settings.worker_backoff_base_seconds,
        backoff_max=settings.worker_backoff_max_seconds,
        lock_timeout=max(settings.worker_lock_timeout_seconds, calls + 60.0),
        retry_after_cap=settings.capture_retry_after_cap_seconds,
        dead_retention=settings.capture_dead_retention_days * 86400.0,
    )


@contextmanager
def _capture(
    settings: Settings, memory: MemoryService, *, worker: bool
) -> Iterator[CaptureService]:
    """The capture service on the memory service's pool (off without an API key); with
    `worker`, and capture on, the capture worker runs in a thread until the block ends."""
    from emergent_memory.memory.capture import CaptureService
    from emergent_memory.memory.capture_worker import CaptureWorker

    llm = build_llm(settings)
    with ExitStack() as stack:
        if llm is not None:
            stack.callback(llm.close)
        capture = CaptureService(memory, llm, capture_config(settings))
        if worker and capture.enabled:
            poll = settings.worker_poll_interval_seconds
            stack.enter_context(CaptureWorker(capture).running_in_thread(poll))
        yield capture


@contextmanager
def open_capture_service(settings: Settings) -> Iterator[CaptureService]:
    """The capture service without its worker (`emergent-memory capture --dry-run`)."""
    with (
        open_memory_service(settings, load_model="now") as memory,
        _capture(settings, memory, worker=False) as capture,
    ):
        yield capture


# verify_memory's bands per embedding model (memory/verify.py), calibrated on the labelled
# claims of benchmarks/data/verify_claims.json, held-out split kept apart (benchmarks/verify.py);
# each kind of difference's own threshold fitted after them on the labelled set and the
# held-out sets after their first runs (benchmarks/verify.py, calibrate_kinds).
VERIFY_POLICIES = {
    LOCAL_MODEL_NAME: VerifyPolicy(
        related_from=0.53,
        conflict_from=0.65,
        confirm_from=0.74,
        keeps_words_from=0.65,
        shared_word_from=0.3,
        conflict_frame=0.5,
        judge_bands=((0.4, 0.45), (0.55, 0.65)),
        denies_from=0.45,
        conflict_from_kind=(
            ("value", 0.7),
            ("exchange", 0.55),
            ("opposite", 0.65),
            ("rejected", 0.65),
            ("negation", 0.5),
            ("clause", 0.6),
        ),
        learned_confirmation="verify_learned.json",
    )
}

# For a model nobody calibrated: close matches only, and no LLM band.
UNCALIBRATED_VERIFY_POLICY = VerifyPolicy(
    related_from=0.6, conflict_from=0.7, confirm_from=0.9, keeps_words_from=0.8
)
VERIFY_JUDGE_TIMEOUT = 20.0  # seconds: an agent waits for verify_memory's answer


@contextmanager
def verify_service(settings: Settings, memory: MemoryService) -> Iterator[VerifyService]:
    """verify_memory's service on the memory service; with an Anthropic key, its LLM judge
    (capture's gate model and daily token budget, a shorter timeout, one retry)."""
    from emergent_memory.llm import AnthropicClient
    from emergent_memory.memory.verify import VerifyConfig, VerifyService

    key = settings.anthropic_api_key
    llm = None
    if key is not None:
        llm = AnthropicClient(
            api_key=key.get_secret_value(),
            base_url=settings.anthropic_base_url,
            timeout=min(settings.llm_timeout, VERIFY_JUDGE_TIMEOUT),
            max_retries=min(settings.llm_max_retries, 1),
        )
    config = VerifyConfig(
        policy=VERIFY_POLICIES.get(memory.embedder.model_name, UNCALIBRATED_VERIFY_POLICY),
        max_claim_length=settings.max_content_length,
        judge_model=settings.capture_gate_model,
        daily_token_budget=settings.capture_daily_token_budget,
    )
    try:
        yield VerifyService(memory, llm, config)
    finally:
        if llm is not None:
            llm.close()


@dataclass(frozen=True)
class Workers:
    """The `worker` command's workers on one pool: embeddings, and capture (None when off);
    and the archive job on a pool of its own (None when off)."""

    embedding: EmbeddingWorker
    capture: CaptureWorker | None
    archive: ArchiveJob | None = None


def archive_config(settings: Settings) -> ArchiveConfig:
    """The archive job's criteria (its schedule is the worker's: _archive_job)."""
    from emergent_memory.memory.lifecycle import ArchiveConfig

    return ArchiveConfig(
        after_days=settings.archive_after_days,
        below_confidence=settings.archive_below_confidence,
        max_importance=settings.archive_max_importance,
        decay_floor=settings.decay_floor,
        decay_grace_days=settings.decay_grace_days,
        decay_half_life_days=settings.decay_half_life_days,
    )


@contextmanager
def _archive_job(settings: Settings) -> Iterator[ArchiveJob | None]:
    """The worker's archive job, as the database's owner: it looks at every actor's memories.
    None with EMERGENT_MEMORY_ARCHIVE_INTERVAL_HOURS=0, or when the configured URL's role
    cannot see every actor's memories (said once in the log, at INFO)."""
    from emergent_memory.memory.lifecycle import NEEDS_ADMIN, ArchiveJob, LifecycleService

    if settings.archive_interval_hours == 0:
        yield None
        return
    with open_database(settings.database_url, settings.data_dir) as db:
        pool = create_pool(
            db.url,
            min_size=1,
            max_size=1,
            timeout=settings.pool_timeout,
            restart=None if db.server is None else db.server.restart_if_stopped,
        )
        try:
            lifecycle = LifecycleService(pool, archive_config(settings))
            if lifecycle.sees_every_actor():
                yield ArchiveJob(lifecycle, settings.archive_interval_hours * 3600)
            else:
                logger.info("the archive job is off here: %s", NEEDS_ADMIN)
                yield None
        finally:
            pool.close()


@contextmanager
def _archive_in_thread(settings: Settings) -> Iterator[None]:
    """The archive job in a background thread of the server (serve's worker), when it is on."""
    with _archive_job(settings) as job:
        if job is None:
            yield
            return
        with job.running_in_thread():
            yield


@contextmanager
def open_workers(
    settings: Settings, *, load_model: Literal["now", "background", "lazily"] = "now"
) -> Iterator[Workers]:
    """The embedding worker, and the capture worker when capture is on (the `worker`
    command), sharing one pool and one embedder; and the archive job when it is on."""
    from emergent_memory import telemetry
    from emergent_memory.memory.capture_worker import CaptureWorker

    telemetry.configure_opentelemetry()  # when OTEL_* configures an exporter
    with (
        _service_and_worker(settings, None, load_model) as (memory, embedding),
        _capture(settings, memory, worker=False) as capture,
        _archive_job(settings) as archive,
    ):
        yield Workers(embedding, CaptureWorker(capture) if capture.enabled else None, archive)


# How long /metrics waits for a connection, and for each count, before leaving a gauge out.
SCRAPE_TIMEOUT = 2.0


def watch_for_metrics(pools: Mapping[str, ConnectionPool[Any]]) -> Callable[[], None]:
    """What /metrics (and OpenTelemetry) read when they collect: each pool's usage by name
    (primary, read), and the depths of the embedding and capture queues of every actor, on
    the primary pool, within SCRAPE_TIMEOUT. Returns what stops watching them."""
    from emergent_memory import telemetry
    from emergent_memory.embeddings import jobs as embedding_jobs
    from emergent_memory.memory import capture_store

    primary = pools["primary"]

    def embedding_queue() -> list[telemetry.Gauge]:
        with quick_transaction(primary, SCRAPE_TIMEOUT) as conn:
            return [telemetry.queue_gauge("embedding_jobs", embedding_jobs.open_counts(conn))]

    def capture_queue() -> list[telemetry.Gauge]:
        with quick_transaction(primary, SCRAPE_TIMEOUT) as conn:
            return [telemetry.queue_gauge("capture_windows", capture_store.queue_depth(conn))]

    def usage_of(name: str, pool: ConnectionPool[Any]) -> telemetry.Source:
        return lambda: telemetry.pool_gauges(name, pool.get_stats())

    stops = [
        telemetry.watch("embedding_queue", embedding_queue),
        telemetry.watch("capture_queue", capture_queue),
        *(telemetry.watch(f"pool_{name}", usage_of(name, pool)) for name, pool in pools.items()),
    ]

    def stop() -> None:
        for unwatch in stops:
            unwatch()

    return stop


@dataclass(frozen=True)
class ServerServices:
    """What a server uses, on one pool of the application role: the memory service for the
    tools, API tokens for the HTTP server's bearer check, injection for /api/v1/context,
    capture for /api/v1/capture."""

    memory: MemoryService
    tokens: TokenService
    injection: InjectionService
    capture: CaptureService
    dashboard: DashboardSessions
    browse: BrowseService
    duplicates: DuplicateService
    verify: VerifyService
    auto_memory: AutoMemoryImport


@contextmanager
def open_server_services(
    settings: Settings,
    *,
    migrate: bool | None = None,
    worker: bool = False,
    load_model: Literal["now", "background", "lazily"] = "background",
) -> Iterator[ServerServices]:
    """The services of `serve`, opened once before the transport starts; with `worker`, the
    embedding worker (and, when capture is on, the capture worker) runs in a thread beside
    them. `migrate` as for open_memory_service."""
    from emergent_memory import telemetry
    from emergent_memory.auth.dashboard import DashboardSessions, SignInLimits
    from emergent_memory.auth.service import TokenService
    from emergent_memory.memory.auto_memory_import import AutoMemoryImport
    from emergent_memory.memory.injection import InjectionService

    opener = open_memory_service_with_worker if worker else open_memory_service
    embedder = build_embedder(settings)
    telemetry.configure_opentelemetry()  # when OTEL_* configures an exporter
    with (
        opener(settings, migrate=migrate, embedder=embedder, load_model=load_model) as memory,
        _capture(settings, memory, worker=worker) as capture,
        verify_service(settings, memory) as verify,
        ExitStack() as watching,
    ):
        pools: dict[str, ConnectionPool[Any]] = {"primary": memory.pool}
        if memory.read_pool is not None:
            pools["read"] = memory.read_pool
        watching.callback(watch_for_metrics(pools))
        yield ServerServices(
            memory=memory,
            tokens=TokenService(memory.pool),
            injection=InjectionService(
                memory.pool, embedder, injection_config(settings, embedder.model_name)
            ),
            capture=capture,
            dashboard=DashboardSessions(
                memory.pool,
                max(1, round(settings.dashboard_session_hours * 3600)),
                SignInLimits(
                    settings.dashboard_sessions_per_token, settings.dashboard_sessions_per_actor
                ),
            ),
            browse=browse_service(memory),
            duplicates=duplicate_service(memory),
            verify=verify,
            auto_memory=AutoMemoryImport(memory.pool, memory),
        )


def browse_service(memory: MemoryService) -> BrowseService:
    """What the REST API, the dashboard and `emergent-memory show` read a memory's page with,
    on the memory service's pools."""
    from emergent_memory.memory.browse import BrowseService

    return BrowseService(memory.pool, memory.read_pool, decay=memory.decay)


def duplicate_service(memory: MemoryService) -> DuplicateService:
    """The review queue (the REST API's /duplicates, the dashboard's page, `emergent-memory
    review`), on the memory service's pool."""
    from emergent_memory.memory.duplicates import DuplicateService

    return DuplicateService(memory.pool, memory)


@dataclass(frozen=True)
class AdminServices:
    """What an operator's commands use, as the database's owner (the configured URL's role;
    on the embedded server its superuser): the whole database's status, export, import and
    re-embedding, token management, the capture queue of every actor, and the archive job.
    `database` and `schema` say which database and revision it is."""

    database: Database
    schema: migrations.SchemaState
    maintenance: MaintenanceService
    tokens: TokenService
    capture: CaptureAdmin
    dashboard_links: DashboardLinks
    lifecycle: LifecycleService
    project_names: ProjectNames


@contextmanager
def open_admin_services(
    settings: Settings,
    *,
    migrate: bool | None = None,
    embeds: bool = False,
    embedder: EmbeddingProvider | None = None,
) -> Iterator[AdminServices]:
    """The operator's services on a one-connection pool of the owner's role. Refuses a
    database that is not at the schema head (unless `migrate`; None: the caller has no
    --migrate option for the refusal to suggest).

    With `embeds` (the configured model) or an `embedder`, the maintenance service can
    re-embed: the model is refused, as in open_memory_service, when its vectors do not fit
    the database, and the local model is loaded here. Without, no model is loaded."""
    from emergent_memory.auth.dashboard import DashboardLinks
    from emergent_memory.auth.service import TokenService
    from emergent_memory.memory.capture_admin import CaptureAdmin
    from emergent_memory.memory.lifecycle import LifecycleService
    from emergent_memory.memory.maintenance import MaintenanceService
    from emergent_memory.memory.project_names import ProjectNames

    if embedder is None and embeds:
        embedder = build_embedder(settings)
    try:
        with open_database(settings.database_url, settings.data_dir) as db:
            schema = migrations.require_current_schema(db.url, migrate=migrate)
            if embedder is not None:
                with connect(db.url) as conn:
                    check_compatible(conn, embedder, EMBEDDED_TEXT)
                if isinstance(embedder, LocalEmbeddings):
                    embedder.load()
            pool = create_pool(db.url, min_size=1, max_size=1, timeout=settings.pool_timeout)
            try:
                yield AdminServices(
                    db,
                    schema,
                    MaintenanceService(pool, embedder),
                    TokenService(pool),
                    CaptureAdmin(pool),
                    DashboardLinks(pool),
                    LifecycleService(pool, archive_config(settings)),
                    ProjectNames(pool),
                )
            finally:
                pool.close()
    finally:
        close = getattr(embedder, "close", None)
        if callable(close):
            close()
