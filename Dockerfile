# BazaarBATNA OpenEnv server: both arenas (bazaar, market) in one FastAPI app.
# For a Hugging Face Docker Space, set `app_port: 8000` in the Space's README front matter.
#   docker build -t bazaarbatna-server . && docker run -p 8000:8000 bazaarbatna-server
#   curl localhost:8000/health ; python -c "from bazaarbatna.server import BazaarEnv; ..."
# Only the `server` extra is installed: no torch, no model weights.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PORT=8000 \
    BAZAARBATNA_MAX_SESSIONS=64 \
    BAZAARBATNA_MAX_MESSAGE_BYTES=65536 \
    BAZAARBATNA_SESSION_TIMEOUT_S=600

# Hugging Face Spaces run containers as uid 1000
RUN useradd --create-home --uid 1000 app
WORKDIR /home/app/src

# Package metadata first (better layer caching), then the library itself.
COPY --chown=app:app pyproject.toml README.md openenv.yaml ./
COPY --chown=app:app bazaarbatna ./bazaarbatna
RUN pip install --upgrade pip && pip install ".[server]"

USER app
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request, os; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"8000\")}/health', timeout=4)"

# `bazaarbatna.server:app` is built on first access from the BAZAARBATNA_* variables above.
# --ws-max-size: uvicorn closes a connection only far above the app's own limit (which answers with an error frame).
CMD ["sh", "-c", "exec uvicorn bazaarbatna.server:app --host 0.0.0.0 --port ${PORT} --ws-max-size 1048576 --proxy-headers --forwarded-allow-ips '*'"]
