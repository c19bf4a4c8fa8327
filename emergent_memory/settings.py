"""The one settings object: every option, read from EMERGENT_MEMORY_* environment variables.

Only the composition roots (CLI entry, server factory, alembic/env.py) call `load_settings`;
everything else receives plain values.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from uuid import UUID

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from emergent_memory.errors import SettingsError

ENV_PREFIX = "EMERGENT_MEMORY_"

# Variables with the prefix that are not settings of the application: the test suite reads
# EMERGENT_MEMORY_TEST_DATABASE_URL itself.
NON_SETTING_VARIABLES = frozenset({"EMERGENT_MEMORY_TEST_DATABASE_URL"})


def default_data_dir() -> Path:
    """The user data directory, e.g. ~/.local/share/emergent-memory on Linux."""
    return platformdirs.user_data_path("emergent-memory", appauthor=False)


# How the local embedding model runs, and where its ONNX file comes from (embeddings/local.py).
LocalRuntime = Literal["auto", "onnx", "torch"]
LocalModelSource = Literal["auto", "hub", "bundled"]
DEFAULT_MODEL_HUB_URL = "https://huggingface.co"


def default_model_cache_dir() -> Path:
    """Where the local model's ONNX export is kept, e.g. ~/.cache/emergent-memory on Linux."""
    return platformdirs.user_cache_path("emergent-memory", appauthor=False)


class Settings(BaseSettings):
    """Configuration of emergent-memory. Each field is the variable EMERGENT_MEMORY_<NAME>."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        extra="forbid",
        frozen=True,
    )

    database_url: str | None = Field(
        default=None,
        repr=False,  # may hold a password
        description=(
            "PostgreSQL URL (postgresql://user:password@host:5432/dbname) of a database with "
            "pgvector. When unset, an embedded PostgreSQL is started in data_dir."
        ),
    )
    read_database_url: str | None = Field(
        default=None,
        repr=False,  # may hold a password
        description=(
            "PostgreSQL URL of a read replica (a streaming standby) of the database. Unset: "
            "every read goes to the database. Set: recall, the memory list and the dashboard's "
            "reads go to it, and to the database while it is down or lags."
        ),
    )
    read_max_lag_seconds: float = Field(
        default=5.0,
        gt=0,
        allow_inf_nan=False,
        description="Reads go to the database instead of the read replica while the replica "
        "replays more than this many seconds behind it.",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Where the embedded PostgreSQL keeps its data (unused with database_url).",
    )
    pool_min_size: int = Field(
        default=1, ge=0, description="Connections the pool keeps open when idle."
    )
    pool_max_size: int = Field(
        default=10, ge=1, description="Most connections the pool opens at once."
    )
    pool_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds a request waits for a free connection before failing as busy.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING", description="Level of the log written to stderr."
    )

    actor_id: UUID | None = Field(
        default=None,
        description="The local user's actor id (stdio server and CLI); unset: derived from "
        "the OS user and machine.",
    )
    project_id: UUID | None = Field(
        default=None,
        description="The current project's id (stdio server and CLI); unset: derived from "
        "the git repository or directory.",
    )

    embedding_provider: Literal["local", "openai"] = Field(
        default="local",
        description=(
            "local: the bundled all-MiniLM-L6-v2, offline. openai: any OpenAI-compatible "
            "/embeddings endpoint (OpenAI, Ollama, vLLM, TEI)."
        ),
    )
    local_runtime: LocalRuntime = Field(
        default="auto",
        description=(
            "How the local model runs. onnx: onnxruntime, about 5 ms per query on two cores "
            "(the ONNX file from local_model_source, checked against reference vectors). "
            "torch: sentence-transformers, about 15 ms (needs the offline extra). auto: onnx, "
            "falling back to torch with a warning if the ONNX file fails and the offline extra "
            "is installed. Both give the same vectors."
        ),
    )
    local_model_source: LocalModelSource = Field(
        default="auto",
        description=(
            "Where the local model's ONNX file comes from, once. hub: downloaded from "
            "model_hub_url (the file the model's repository publishes, at a pinned revision). "
            "bundled: exported from the weights of the offline extra "
            "(emergent-memory[offline]), without network. auto: bundled when the offline extra "
            "is installed, else hub."
        ),
    )
    model_hub_url: str = Field(
        default=DEFAULT_MODEL_HUB_URL,
        description="The model hub (or a mirror of it) the local model is downloaded from.",
    )
    model_cache_dir: Path = Field(
        default_factory=default_model_cache_dir,
        description="Where the local model's ONNX file is kept (about 90 MB).",
    )
    embedding_model: str | None = Field(
        default=None, description="Model name for the openai provider (required with it)."
    )
    embedding_base_url: str = Field(
        default="https://api.openai.com/v1",
        description="Base URL of the OpenAI-compatible API; /embeddings is appended.",
    )
    embedding_api_key: SecretStr | None = Field(
        default=None, description="API key for the openai provider (sent as a bearer token)."
    )
    embedding_dimensions: int | None = Field(
        default=None,
        ge=1,
        description="Vector size of the openai provider's model (required with it).",
    )
    embedding_send_dimensions: bool = Field(
        default=False,
        description="Ask the endpoint for embedding_dimensions (OpenAI text-embedding-3-*).",
    )
    embedding_query_prefix: str = Field(
        default="", description="Prepended to queries, e.g. 'search_query: ' for nomic models."
    )
    embedding_document_prefix: str = Field(
        default="", description="Prepended to stored texts, e.g. 'search_document: '."
    )
    embedding_timeout: float = Field(
        default=10.0, gt=0, description="Seconds before an embedding request gives up."
    )
    embedding_max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries of a failed embedding request."
    )

    max_content_length: int = Field(
        default=2000, ge=1, le=100_000, description="Longest memory accepted, in characters."
    )
    max_request_bytes: int = Field(
        default=1_048_576,
        ge=1024,
        description="HTTP server: largest request body accepted, in bytes; larger ones get 413.",
    )
    http_max_sessions: int = Field(
        default=1000,
        ge=1,
        description="HTTP server: most MCP sessions open at once. At the limit a new session "
        "closes an idle one (first of the actor holding the most), else the oldest of the actor "
        "holding the most; it is refused (503, Retry-After) only when that actor is its own.",
    )
    http_max_sessions_per_token: int = Field(
        default=20,
        ge=1,
        description="HTTP server: most MCP sessions one token holds open; a new one closes the "
        "token's oldest idle session, or is refused with 429 and Retry-After when none is idle.",
    )
    http_max_sessions_per_actor: int = Field(
        default=50,
        ge=1,
        description="HTTP server: most MCP sessions one actor holds open over all its tokens; "
        "as for a token, its oldest idle session is closed, or the new one refused with 429.",
    )
    http_session_idle_timeout: float = Field(
        default=1800.0,
        gt=0,
        allow_inf_nan=False,
        description="HTTP server: seconds without a request after which an MCP session is "
        "closed (its client then opens a new one).",
    )
    dashboard_session_hours: float = Field(
        default=12.0,
        gt=0,
        le=24 * 30,
        allow_inf_nan=False,
        description="HTTP server: hours a dashboard sign-in lasts (never longer than its "
        "token); then the browser signs in again.",
    )
    dashboard_sessions_per_token: int = Field(
        default=10,
        ge=1,
        description="HTTP server: most dashboard sign-ins one token holds; another signs out "
        "the one unused the longest.",
    )
    dashboard_sessions_per_actor: int = Field(
        default=20,
        ge=1,
        description="HTTP server: most dashboard sign-ins one actor holds (tokens and sign-in "
        "links together); another signs out the one unused the longest.",
    )
    metrics_public: bool = Field(
        default=False,
        description="HTTP server: serve /metrics (Prometheus) without a token, for a scraper "
        "on a private network; otherwise it needs a token with the scope memory:admin.",
    )
    dedup_threshold: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description=(
            "Cosine similarity at or above which a new memory supersedes the most similar "
            "existing one (for all-MiniLM-L6-v2, the high threshold of its dedup rule). Unset: "
            "the value calibrated for the embedding model."
        ),
    )
    dedup_judge: bool = Field(
        default=True,
        description="With an Anthropic API key: a new memory and its nearest one that the "
        "save rules cannot tell apart (kept both, reported) are judged by the gate model "
        "(same, corrects, conflicts, distinct), within capture's daily token budget. false: "
        "the rules alone decide.",
    )
    recall_candidates: int = Field(
        default=50,
        ge=10,
        le=1000,
        description="Candidates each recall branch contributes; a query word in more memories "
        "than this weighs nothing in the full-text branch.",
    )
    recall_rrf_k: int = Field(
        default=10, ge=1, description="k of reciprocal rank fusion: weight / (k + rank)."
    )
    recall_lexical_weight: float = Field(
        default=1.0, ge=0, description="Weight of the full-text branch in fusion."
    )
    recall_vector_weight: float = Field(
        default=1.5, ge=0, description="Weight of the vector branch in fusion."
    )
    recall_min_similarity: float = Field(
        default=0.15,
        ge=-1,
        le=1,
        description="Recall's vector branch finds nothing when even the closest memory is "
        "below this cosine similarity, and no memory below half of it. What recall returns is "
        "decided by relevance (EMERGENT_MEMORY_RECALL_MIN_RELEVANCE).",
    )
    recall_min_relevance: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Least relevance (0-1: the estimated chance a memory answers the query, "
        "docs/memory.md) of what recall, REST search and the dashboard return; a caller's "
        "min_relevance replaces it. Unset: the floor calibrated for the embedding model (none "
        "for a model nobody calibrated).",
    )
    recall_confidence_weight: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="How much a memory's confidence scales its score (0: not at all).",
    )
    recall_recency_weight: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="How much recency scales a memory's score (0: not at all): recency is 1 "
        "when the memory was used or changed now and halves every half-life of its category "
        "(fact 90 days, pattern 180, the others 365).",
    )
    recall_importance_weight: float = Field(
        default=0.0,
        ge=0,
        le=0.5,
        description="How much importance scales a memory's score (0, the default: not at all; "
        "the retrieval benchmark found no weight that does not lower quality): the score is "
        "multiplied by 1 + weight x (low -1, normal 0, high 1, core 2).",
    )
    decay_floor: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="Confidence never decays below this (a memory stored with less keeps its own).",
    )
    decay_grace_days: float = Field(
        default=30,
        ge=0,
        allow_inf_nan=False,
        description="Days a memory may go unused (no recall, evidence or change) before its "
        "confidence starts to decay.",
    )
    decay_half_life_days: float = Field(
        default=180,
        gt=0,
        allow_inf_nan=False,
        description="Days of disuse after the grace period that halve a memory's effective "
        "confidence (never for core memories; recalling or reinforcing restores it).",
    )

    worker_batch_size: int = Field(
        default=32, ge=1, le=1024, description="Embedding jobs a worker claims per round."
    )
    worker_max_attempts: int = Field(
        default=8,
        ge=1,
        le=100,
        description="Attempts of an embedding job before it is dead-lettered.",
    )
    worker_backoff_base_seconds: float = Field(
        default=2.0,
        gt=0,
        description="Wait before a failed job's second attempt; doubles with each attempt.",
    )
    worker_backoff_max_seconds: float = Field(
        default=600.0, gt=0, description="Longest wait between two attempts of a job."
    )
    worker_poll_interval_seconds: float = Field(
        default=2.0, gt=0, le=3600, description="How often an idle worker looks for due jobs."
    )
    worker_lock_timeout_seconds: float = Field(
        default=300.0,
        gt=0,
        description="After this long, a running job whose worker went silent is due again.",
    )

    # -- the memory lifecycle: the archive job (docs/operations.md) --------------------------
    archive_interval_hours: float = Field(
        default=24.0,
        ge=0,
        le=8760,
        description="How often the worker runs the archive job (its first run is a minute "
        "after it starts); 0 turns the job off.",
    )
    archive_after_days: float = Field(
        default=180.0,
        gt=0,
        description="A memory unused for this many days (no recall, no evidence, no new "
        "version) may be archived.",
    )
    archive_below_confidence: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Only memories whose effective (decayed) confidence is below this are "
        "archived.",
    )
    archive_max_importance: Literal["low", "normal"] = Field(
        default="normal",
        description="The highest importance the archive job archives (high and core "
        "memories never are).",
    )

    # -- automatic memory: injection (docs/automatic-memory.md) ------------------------------
    injection_budget_tokens: int = Field(
        default=500,
        ge=100,  # memory/injection.py MIN_BUDGET and MAX_BUDGET
        le=3000,
        description="Most estimated tokens one injection adds to a session; a memory that does "
        "not fit is skipped, never cut.",
    )
    injection_min_prompt_words: int = Field(
        default=3,
        ge=1,
        le=50,
        description="Prompts with fewer words than this get no memories injected.",
    )
    injection_relevance_floor: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Least relevance (0-1, docs/memory.md) of a memory to a prompt for the "
        "memory to be injected. Unset: the floor calibrated for the embedding model.",
    )
    injection_log_retention_days: float = Field(
        default=30.0,
        gt=0,
        description="Days the injection log keeps an answer (its prompt and what it injected); "
        "older answers are deleted, except those that say which memories a live session was "
        "already shown.",
    )

    # -- automatic memory: capture ---------------------------------------------------------
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        description="Anthropic API key for automatic capture. Unset: capture is off and "
        "nothing of a conversation is stored.",
    )
    anthropic_base_url: str = Field(
        default="https://api.anthropic.com",
        description="Base URL of the Anthropic API (or a proxy or gateway). Always passed to "
        "the SDK, so that an ANTHROPIC_BASE_URL in the environment (Claude Code's, which a "
        "server the hooks start inherits) never redirects capture.",
    )
    capture_gate_model: str = Field(
        default="claude-haiku-4-5",
        min_length=1,
        description="The cheap model that decides whether a window holds anything worth "
        "remembering.",
    )
    capture_extractor_model: str = Field(
        default="claude-sonnet-4-6",
        min_length=1,
        description="The model that extracts memories from a window the gate let through.",
    )
    capture_window_turns: int = Field(
        default=16, ge=2, le=200, description="Turns of conversation per capture window."
    )
    capture_window_overlap: int = Field(
        default=4,
        ge=0,
        le=100,
        description="Turns before a window that its models also read, for context.",
    )
    capture_tool_output_chars: int = Field(
        default=1500,
        ge=200,
        le=100_000,
        description="Longest tool output kept for capture; the head and tail of a longer one "
        "are kept.",
    )
    capture_daily_token_budget: int = Field(
        default=1_000_000,
        ge=0,
        description="LLM tokens (input and output) capture may spend per actor per day (UTC); "
        "windows wait for the next day once it is spent. 0: capture spends nothing.",
    )
    capture_idle_seconds: float = Field(
        default=600.0,
        gt=0,
        description="A session quiet for this long has its remaining turns captured.",
    )
    capture_max_attempts: int = Field(
        default=6,
        ge=1,
        le=100,
        description="Attempts of a capture window (rate limits, overload, timeouts) before it "
        "is dead-lettered with the reason.",
    )
    capture_retry_after_cap_seconds: float = Field(
        default=900.0,
        ge=0,
        description="The longest retry-after a capture window is retried after as an attempt; "
        "the API asking for longer parks the window until then, the attempt given back.",
    )
    capture_dead_retention_days: float = Field(
        default=7.0,
        gt=0,
        description="Days a dead capture window keeps its turns (so that capture retry can "
        "revive it); then they are deleted and only the reason is kept.",
    )
    llm_timeout: float = Field(
        default=60.0, gt=0, description="Seconds an LLM request's attempt waits for an answer."
    )
    llm_max_retries: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Retries of an unavailable LLM request within one call, each after at most "
        "8 s (the API's retry-after, else a backoff) and within the call's deadline.",
    )
    llm_deadline: float = Field(
        default=120.0,
        gt=0,
        description="Seconds one LLM call may take at most, its retries and waits included.",
    )

    # -- automatic memory: Claude Code hooks (read by `emergent-memory hook`) ---------------
    hook_url: str | None = Field(
        default=None,
        description="The server the hooks talk to. Unset: the hooks file's, else "
        "http://127.0.0.1:8765.",
    )
    hook_token: SecretStr | None = Field(
        default=None, description="The bearer token of the hooks. Unset: the hooks file's."
    )
    hook_config: Path | None = Field(
        default=None,
        description="The hooks file `hooks install` writes (URL, token; mode 0600). Unset: "
        "hooks.json in the user's config directory (~/.config/emergent-memory on Linux).",
    )

    @field_validator("database_url", "read_database_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a URL starting with postgresql://")
        return value

    @field_validator("model_hub_url", "anthropic_base_url", "hook_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be a URL starting with https:// (or http://)")
        return value.rstrip("/")

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_case_level(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    @model_validator(mode="after")
    def _openai_needs_model_and_dimensions(self) -> Settings:
        if self.embedding_provider == "openai":
            missing = [
                ENV_PREFIX + name.upper()
                for name in ("embedding_model", "embedding_dimensions")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(
                    f"{' and '.join(missing)} must be set with "
                    f"{ENV_PREFIX}EMBEDDING_PROVIDER=openai"
                )
        return self

    @model_validator(mode="after")
    def _window_overlap(self) -> Settings:
        if self.capture_window_overlap >= self.capture_window_turns:
            raise ValueError(
                f"{ENV_PREFIX}CAPTURE_WINDOW_OVERLAP ({self.capture_window_overlap}) must be "
                f"smaller than {ENV_PREFIX}CAPTURE_WINDOW_TURNS ({self.capture_window_turns})"
            )
        return self

    @model_validator(mode="after")
    def _pool_bounds(self) -> Settings:
        if self.pool_min_size > self.pool_max_size:
            raise ValueError(
                f"{ENV_PREFIX}POOL_MIN_SIZE ({self.pool_min_size}) must not exceed "
                f"{ENV_PREFIX}POOL_MAX_SIZE ({self.pool_max_size})"
            )
        return self

    @model_validator(mode="after")
    def _backoff_bounds(self) -> Settings:
        if self.worker_backoff_base_seconds > self.worker_backoff_max_seconds:
            raise ValueError(
                f"{ENV_PREFIX}WORKER_BACKOFF_BASE_SECONDS ({self.worker_backoff_base_seconds:g}) "
                f"must not exceed {ENV_PREFIX}WORKER_BACKOFF_MAX_SECONDS "
                f"({self.worker_backoff_max_seconds:g})"
            )
        return self


def setting_variables() -> dict[str, str]:
    """Every setting's environment variable name, mapped to its field name."""
    return {ENV_PREFIX + name.upper(): name for name in Settings.model_fields}


def _unknown_variables(environ: Mapping[str, str]) -> list[str]:
    known = setting_variables()
    problems = []
    for variable in sorted(environ):
        if not variable.upper().startswith(ENV_PREFIX) or variable in NON_SETTING_VARIABLES:
            continue
        if variable.upper() in known:
            continue
        close = difflib.get_close_matches(variable.upper(), list(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        problems.append(f"{variable} is not a known setting{hint}")
    return problems


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read and check the settings; any unknown or malformed variable is a `SettingsError`.

    The message names each offending variable, so the user knows exactly what to fix.
    Variable names are matched case-insensitively; empty values count as unset.
    """
    environ = os.environ if environ is None else environ
    problems = _unknown_variables(environ)
    if not problems:
        known = setting_variables()
        values = {
            known[name.upper()]: value
            for name, value in environ.items()
            if name.upper() in known and value != ""
        }
        try:
            return Settings.model_validate(values)
        except ValidationError as error:
            problems = [_describe(detail) for detail in error.errors()]
    raise SettingsError("invalid configuration: " + "; ".join(problems))


def _describe(detail: ErrorDetails) -> str:
    message = detail["msg"].removeprefix("Value error, ")
    if not detail["loc"]:
        return message
    field = str(detail["loc"][0])
    variable = ENV_PREFIX + field.upper()
    if field in (
        "database_url",
        "read_database_url",
        "embedding_api_key",
        "anthropic_api_key",
        "hook_token",
    ):
        # never echo secrets
        return f"{variable}: {message}"
    return f"{variable}: {message} (got {detail['input']!r})"
