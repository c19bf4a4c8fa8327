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
# The default install, without torch: the local model's ONNX file is downloaded from the
# model hub at build time and checked against its reference vectors (docs/memory.md,
# Embeddings), so the server starts in about a second without network.
ENV EMERGENT_MEMORY_MODEL_CACHE_DIR=/opt/emergent-memory/model-cache
RUN pip install . && useradd --system --uid 10001 emergent \
    && EMERGENT_MEMORY_LOCAL_RUNTIME=onnx python -c "from emergent_memory import app, settings; \
app.build_embedder(settings.load_settings()).load()"

USER emergent
ENTRYPOINT ["emergent-memory"]
CMD ["--help"]
