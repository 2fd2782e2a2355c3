# iac-code serving ACP over HTTP + SSE on 0.0.0.0:8765. A bearer token is required:
#   docker run -e IACCODE_ACP_HTTP_TOKEN=... -p 127.0.0.1:8765:8765 -v iac-code-data:/home/agent/.iac-code \
#     -v "$PWD/workspace:/workspace" iac-code
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY domain domain
COPY application application
COPY adapters adapters
COPY bootstrap bootstrap
COPY migrations migrations
# The otel extra: tracing is turned on by OTEL_* variables alone (docs/tracing.md).
# bubblewrap confines the agent's commands (docs/sandbox.md); the container must be allowed
# to make user namespaces (compose's security_opt), or the server refuses to start unless
# IAC_CODE_SANDBOX=off says to run without.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
  && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir ".[otel]" && useradd --create-home --uid 10001 agent \
  && mkdir /workspace && chown agent:agent /workspace
USER agent
# Made here so that a new named volume mounted on it belongs to the agent user.
RUN mkdir -p /home/agent/.iac-code
ENV IAC_CODE_CONFIG_DIR=/home/agent/.iac-code IAC_CODE_HTTP_REQUIRE_TOKEN=1
VOLUME ["/home/agent/.iac-code"]
# The project the sessions work in (`"cwd": "/workspace"`): compose mounts ./workspace here.
WORKDIR /workspace
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]
ENTRYPOINT ["iac-code"]
CMD ["acp", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
