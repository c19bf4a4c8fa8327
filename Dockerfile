# emergent-memory server image (used by docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY emergent_memory ./emergent_memory
COPY alembic ./alembic
COPY alembic.ini ./
COPY packs ./packs
# The local model's ONNX export is made at build time (docs/memory.md, Embeddings): the
# server then starts in about a second without importing torch.
ENV EMERGENT_MEMORY_MODEL_CACHE_DIR=/opt/emergent-memory/model-cache
RUN pip install torch==2.13.0 && pip install . && useradd --system --uid 10001 emergent \
    && EMERGENT_MEMORY_LOCAL_RUNTIME=onnx python -c "from emergent_memory import app, settings; \
app.build_embedder(settings.load_settings()).load()"

USER emergent
ENTRYPOINT ["emergent-memory"]
CMD ["--help"]
