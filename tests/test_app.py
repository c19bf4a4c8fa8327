"""The composition root: settings to embedder and service, and the start-up refusals."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from emergent_memory import app
from emergent_memory.auth.principal import Principal
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings
from emergent_memory.errors import EmbeddingMismatch, SchemaNotCurrent, SettingsError
from emergent_memory.memory import relevance
from emergent_memory.memory.dedup import DedupPolicy
from emergent_memory.memory.dedup_learned import LearnedReading
from emergent_memory.settings import Settings, load_settings
from tests.embedders import BagOfWordsEmbedder, EmbeddingServer


def settings_for(url: str, **more: str) -> Settings:
    return load_settings({"EMERGENT_MEMORY_DATABASE_URL": url, **more})


def test_the_openai_provider_needs_a_model_and_dimensions() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings({"EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai"})
    assert "EMERGENT_MEMORY_EMBEDDING_MODEL and EMERGENT_MEMORY_EMBEDDING_DIMENSIONS" in str(
        raised.value
    )


def test_the_api_key_is_never_echoed() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(
            {"EMERGENT_MEMORY_EMBEDDING_API_KEY": "sk-x", "EMERGENT_MEMORY_RECALL_RRF_K": "0"}
        )
    assert "sk-x" not in str(raised.value)
    settings = load_settings({"EMERGENT_MEMORY_EMBEDDING_API_KEY": "sk-secret-value"})
    assert "sk-secret-value" not in repr(settings)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400", "0"])
def test_the_session_idle_timeout_must_be_a_finite_positive_number(value: str) -> None:
    """An infinite timeout would keep idle MCP sessions for ever (the cap they exist for)."""
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_HTTP_SESSION_IDLE_TIMEOUT"):
        load_settings({"EMERGENT_MEMORY_HTTP_SESSION_IDLE_TIMEOUT": value})
    assert (
        load_settings(
            {"EMERGENT_MEMORY_HTTP_SESSION_IDLE_TIMEOUT": "2.5"}
        ).http_session_idle_timeout
        == 2.5
    )


def test_settings_choose_the_embedder() -> None:
    assert isinstance(app.build_embedder(load_settings({})), LocalEmbeddings)
    remote = app.build_embedder(
        load_settings(
            {
                "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
                "EMERGENT_MEMORY_EMBEDDING_MODEL": "nomic-embed-text",
                "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
                "EMERGENT_MEMORY_EMBEDDING_BASE_URL": "http://127.0.0.1:11434/v1",
            }
        )
    )
    assert isinstance(remote, OpenAICompatibleEmbeddings)
    assert (remote.model_name, remote.dimensions) == ("nomic-embed-text", 384)
    remote.close()


READING = LearnedReading("dedup_learned.json")


def test_the_dedup_policy_follows_the_model_unless_the_threshold_is_set() -> None:
    calibrated = app.dedup_policy(load_settings({}), LOCAL_MODEL_NAME)
    assert calibrated == DedupPolicy(
        threshold=0.95,
        text_rule_from=0.64,
        named_change_from=0.60,
        latin_only_model=True,
        labelled_from=1.0,
        change_from=0.40,
        reworded_from=0.85,
        role_from=0.30,
        learned=READING,
    )
    # a model nobody calibrated: the plain threshold, no bands
    assert app.dedup_policy(load_settings({}), "some/other-model") == DedupPolicy.plain(0.98)
    chosen = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.9"})
    assert app.dedup_policy(chosen, LOCAL_MODEL_NAME) == DedupPolicy(
        0.9, 0.64, 0.60, True, 1.0, 0.40, 0.85, 0.30, READING
    )
    # a lower threshold leaves the band of one word exchanged as it is (from 0.8 the
    # similarity alone supersedes anyway)
    below = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.8"})
    assert app.dedup_policy(below, LOCAL_MODEL_NAME) == DedupPolicy(
        0.8, 0.64, 0.60, True, 1.0, 0.40, 0.85, 0.30, READING
    )
    assert app.dedup_policy(chosen, "some/other-model") == DedupPolicy.plain(0.9)
    low = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.5"})
    # no band left above the threshold; the stated change's band starts at 0.40 still
    assert app.dedup_policy(low, LOCAL_MODEL_NAME) == DedupPolicy(
        0.5, 0.5, 0.5, True, 1.0, 0.40, 0.85, 0.30, READING
    )
    lower = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.3"})
    assert app.dedup_policy(lower, LOCAL_MODEL_NAME) == DedupPolicy(
        0.3, 0.3, 0.3, True, 1.0, 0.3, 0.85, 0.3, READING
    )
    # the role's band never starts above the stated change's
    lowest = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.2"})
    assert app.dedup_policy(lowest, LOCAL_MODEL_NAME) == DedupPolicy(
        0.2, 0.2, 0.2, True, 1.0, 0.2, 0.85, 0.2, READING
    )
    # the service's config carries all of it, the learned reading included
    config = app.memory_config(load_settings({}), LOCAL_MODEL_NAME)
    assert config.dedup_policy == calibrated
    assert app.memory_config(load_settings({}), "some/other-model").dedup_policy.learned is None


def test_a_model_of_another_dimension_is_refused_at_start_up(database_url: str) -> None:
    wide = BagOfWordsEmbedder("test/wide", dimensions=768)
    with (
        pytest.raises(EmbeddingMismatch, match=r"768-dimension .* stores 384-dimension.*reembed"),
        app.open_memory_service(settings_for(database_url), embedder=wide),
    ):
        pass


def test_an_unmigrated_database_is_refused_unless_migrating(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    with (
        pytest.raises(SchemaNotCurrent, match="emergent-memory db upgrade"),
        app.open_memory_service(settings_for(url), embedder=BagOfWordsEmbedder()),
    ):
        pass
    with app.open_memory_service(
        settings_for(url), migrate=True, embedder=BagOfWordsEmbedder()
    ) as service:
        me = Principal(uuid.uuid4(), uuid.uuid4())
        assert service.save(me, "Migrated on start", "fact")["status"] == "created"


def test_the_service_over_an_openai_compatible_endpoint_degrades_and_recovers(
    database_url: str, embedding_server: EmbeddingServer
) -> None:
    settings = settings_for(
        database_url,
        EMERGENT_MEMORY_EMBEDDING_PROVIDER="openai",
        EMERGENT_MEMORY_EMBEDDING_MODEL="test-remote",
        EMERGENT_MEMORY_EMBEDDING_DIMENSIONS="384",
        EMERGENT_MEMORY_EMBEDDING_BASE_URL=embedding_server.base_url,
        EMERGENT_MEMORY_EMBEDDING_MAX_RETRIES="0",
        EMERGENT_MEMORY_EMBEDDING_TIMEOUT="2",
    )
    me = Principal(uuid.uuid4(), uuid.uuid4())
    with app.open_memory_service(settings) as service:
        saved = service.save(me, "The payments service is written in Go", "fact")
        assert saved["degraded"] is False
        hit = service.recall(me, "payments service")["memories"][0]
        assert hit["scores"]["vector_rank"] == 1

        embedding_server.down = True
        offline = service.save(me, "The search service is written in Rust", "fact")
        assert offline["degraded"] is True
        recalled = service.recall(me, "search service Rust")
        assert recalled["degraded"] is True
        assert recalled["memories"][0]["id"] == offline["memory"]["id"]

        embedding_server.down = False
        with app.open_admin_services(settings, embeds=True) as admin:
            assert admin.maintenance.reembed()["remaining"] == 0
        back = service.recall(me, "search service Rust")
        assert back["degraded"] is False
        assert back["memories"][0]["scores"]["vector_rank"] == 1


def test_on_the_embedded_server_the_service_runs_as_an_application_role() -> None:
    """The default install is protected by row-level security too: the pool logs in as
    emergent_memory_server (a member of emergent_memory_app), maintenance as the owner."""
    data_dir = Path(tempfile.mkdtemp(prefix="ema-", dir="/tmp"))  # short: holds the socket
    try:
        settings = load_settings({"EMERGENT_MEMORY_DATA_DIR": str(data_dir)})
        with app.open_memory_service(
            settings, migrate=True, embedder=BagOfWordsEmbedder()
        ) as service:
            me = Principal(uuid.uuid4(), uuid.uuid4())
            assert service.save(me, "Embedded installs use row-level security", "fact")
            with service.pool.connection() as conn:
                row = conn.execute(
                    "SELECT current_user, r.rolsuper, r.rolbypassrls, "
                    "pg_has_role(current_user, 'emergent_memory_app', 'MEMBER') "
                    "FROM pg_roles r WHERE r.rolname = current_user"
                ).fetchone()
                assert row == ("emergent_memory_server", False, False, True)
                assert conn.execute("SELECT count(*) FROM kb.memories").fetchone() == (0,)
        with (
            app.open_memory_service(
                settings, embedder=BagOfWordsEmbedder(), role="owner"
            ) as maintenance,
            maintenance.pool.connection() as conn,
        ):
            assert conn.execute("SELECT count(*) FROM kb.memories").fetchone() == (1,)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_server_role_that_bypasses_row_level_security_is_warned_about(
    database_url: str, app_database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="emergent_memory.app"):
        with app.open_memory_service(settings_for(database_url), embedder=BagOfWordsEmbedder()):
            pass
        assert "bypasses row-level security" in caplog.text
        caplog.clear()
        with app.open_memory_service(settings_for(app_database_url), embedder=BagOfWordsEmbedder()):
            pass
        assert "bypasses row-level security" not in caplog.text


def test_the_relevance_floors_follow_the_model_unless_they_are_set() -> None:
    defaults = Settings()
    calibrated = app.injection_config(defaults, LOCAL_MODEL_NAME)
    assert calibrated.relevance_floor == relevance.LOCAL.injection_floor
    assert app.memory_config(defaults, LOCAL_MODEL_NAME).recall_min_relevance == (
        relevance.LOCAL.recall_floor
    )
    # a model nobody calibrated: the local weights, its injection floor, no floor on recall
    other = app.injection_config(defaults, "someone/else")
    assert other.relevance_floor == relevance.LOCAL.injection_floor
    assert app.memory_config(defaults, "someone/else").recall_min_relevance == 0.0
    chosen = load_settings(
        {
            "EMERGENT_MEMORY_RECALL_MIN_RELEVANCE": "0.25",
            "EMERGENT_MEMORY_INJECTION_RELEVANCE_FLOOR": "0.42",
            "EMERGENT_MEMORY_INJECTION_BUDGET_TOKENS": "250",
            "EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS": "5",
            "EMERGENT_MEMORY_MAX_CONTENT_LENGTH": "900",
        }
    )
    for model in (LOCAL_MODEL_NAME, "someone/else"):
        config = app.injection_config(chosen, model)
        assert config.relevance_floor == 0.42
        assert (config.budget_tokens, config.min_prompt_words, config.max_prompt_length) == (
            250,
            5,
            900,
        )
        assert config.recall_tuning == app.memory_config(chosen, model).recall_tuning
        assert app.memory_config(chosen, model).recall_min_relevance == 0.25


@pytest.mark.parametrize("budget", ["99", "3001"])
def test_an_injection_budget_that_cannot_hold_a_memory_or_is_too_large_is_refused(
    budget: str,
) -> None:
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_INJECTION_BUDGET_TOKENS"):
        load_settings({"EMERGENT_MEMORY_INJECTION_BUDGET_TOKENS": budget})


def test_injection_decays_confidence_with_the_recall_settings() -> None:
    chosen = load_settings(
        {
            "EMERGENT_MEMORY_DECAY_FLOOR": "0.2",
            "EMERGENT_MEMORY_DECAY_GRACE_DAYS": "7",
            "EMERGENT_MEMORY_DECAY_HALF_LIFE_DAYS": "60",
        }
    )
    config = app.injection_config(chosen, LOCAL_MODEL_NAME)
    assert config.decay == app.memory_config(chosen, LOCAL_MODEL_NAME).decay
    assert (config.decay.floor, config.decay.grace_days, config.decay.half_life_days) == (
        0.2,
        7,
        60,
    )
