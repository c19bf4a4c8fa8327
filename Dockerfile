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
RUN pip install torch==2.13.0 && pip install . && useradd --system --uid 10001 emergent

USER emergent
ENTRYPOINT ["emergent-memory"]
CMD ["--help"]
