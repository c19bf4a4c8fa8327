"""The composition root: settings to embedder and service, and the start-up refusals."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from emergent_memory import app
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME, LocalEmbeddings
from emergent_memory.embeddings.openai import OpenAICompatibleEmbeddings
from emergent_memory.errors import EmbeddingMismatch, SchemaNotCurrent, SettingsError
from emergent_memory.memory import Principal
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


def test_the_dedup_threshold_follows_the_model_unless_set() -> None:
    assert app.dedup_threshold(load_settings({}), LOCAL_MODEL_NAME) == 0.87
    assert app.dedup_threshold(load_settings({}), "some/other-model") == 0.95
    chosen = load_settings({"EMERGENT_MEMORY_DEDUP_THRESHOLD": "0.9"})
    assert app.dedup_threshold(chosen, LOCAL_MODEL_NAME) == 0.9


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
        assert service.reembed()["remaining"] == 0
        back = service.recall(me, "search service Rust")
        assert back["degraded"] is False
        assert back["memories"][0]["scores"]["vector_rank"] == 1
