"""The local model's two runtimes: the ONNX export gives sentence-transformers' vectors, is
made once and checked on every load, and a bad export never produces vectors."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emergent_memory.embeddings import local
from emergent_memory.embeddings.base import EmbeddingUnavailable
from emergent_memory.embeddings.local import LocalEmbeddings
from emergent_memory.errors import SettingsError
from emergent_memory.settings import load_settings

TEXTS = [
    "User prefers tabs for indentation",
    "The staging database runs on port 5432 in eu-west-1",
    "WiFi issue",
    "Deploys go through `make release` after the changelog is updated; never push tags by hand.",
    "Ünïcödé: 東京の天気 🚀",
    "x",
    " ".join(["very long memory about the payment service rollout"] * 60),
]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("model-cache")
    LocalEmbeddings(runtime="onnx", cache_dir=directory).load()
    return directory


def test_onnx_vectors_match_sentence_transformers(export_dir: Path) -> None:
    onnx = LocalEmbeddings(runtime="onnx", cache_dir=export_dir)
    torch = LocalEmbeddings(runtime="torch")
    assert onnx.runtime == "onnx"
    assert torch.runtime == "torch"
    together = np.array(onnx.embed_documents(TEXTS))
    expected = np.array(torch.embed_documents(TEXTS))
    assert together.shape == (len(TEXTS), 384)
    assert np.abs(together - expected).max() < 1e-6  # what the docs say
    # alone, a query is not changed by padding to other texts' length
    alone = np.array([onnx.embed_query(text) for text in TEXTS])
    assert np.abs(alone - expected).max() < 1e-6
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_the_export_is_made_once_and_later_loads_need_no_torch(export_dir: Path) -> None:
    exports = list(export_dir.glob("*.onnx"))
    assert len(exports) == 1
    assert Path(str(exports[0]) + ".probes.npy").exists()
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


def _corrupt_copy(export_dir: Path, tmp_path: Path) -> Path:
    """A cache whose export no longer gives the recorded probe vectors."""
    for file in export_dir.iterdir():
        (tmp_path / file.name).write_bytes(file.read_bytes())
    (probes,) = tmp_path.glob("*.probes.npy")
    np.save(probes, np.load(probes)[::-1])  # the vectors of other sentences
    return tmp_path


def test_a_bad_export_is_refused_with_runtime_onnx(export_dir: Path, tmp_path: Path) -> None:
    cache = _corrupt_copy(export_dir, tmp_path)
    with pytest.raises(EmbeddingUnavailable, match="differs from sentence-transformers") as info:
        LocalEmbeddings(runtime="onnx", cache_dir=cache).embed_query("anything")
    assert "EMERGENT_MEMORY_LOCAL_RUNTIME=torch" in str(info.value)


def test_auto_falls_back_to_torch_with_a_warning(
    export_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _corrupt_copy(export_dir, tmp_path)
    embedder = LocalEmbeddings(runtime="auto", cache_dir=cache)
    with caplog.at_level(logging.WARNING, logger=local.__name__):
        vector = embedder.embed_query("User prefers tabs for indentation")
        embedder.embed_query("a second query does not try the export again")
    assert embedder.runtime == "torch"
    assert caplog.text.count("using sentence-transformers") == 1
    expected = LocalEmbeddings(runtime="torch").embed_query("User prefers tabs for indentation")
    assert np.abs(np.array(vector) - np.array(expected)).max() < 1e-6


def test_auto_exports_into_an_empty_cache(tmp_path: Path) -> None:
    embedder = LocalEmbeddings(runtime="auto", cache_dir=tmp_path / "new" / "cache")
    assert embedder.runtime == "onnx"
    assert len(list((tmp_path / "new" / "cache").glob("*.onnx"))) == 1


def test_settings_choose_the_runtime_and_cache(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "EMERGENT_MEMORY_LOCAL_RUNTIME": "torch",
            "EMERGENT_MEMORY_MODEL_CACHE_DIR": str(tmp_path),
        }
    )
    assert settings.local_runtime == "torch"
    assert settings.model_cache_dir == tmp_path
    assert load_settings({}).local_runtime == "auto"
    with pytest.raises(SettingsError, match="EMERGENT_MEMORY_LOCAL_RUNTIME"):
        load_settings({"EMERGENT_MEMORY_LOCAL_RUNTIME": "cuda"})
