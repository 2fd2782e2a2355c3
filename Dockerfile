FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY domain domain
COPY application application
COPY adapters adapters
COPY bootstrap bootstrap
COPY migrations migrations
RUN pip install --no-cache-dir . && useradd --create-home agent
USER agent
ENV IAC_CODE_CONFIG_DIR=/home/agent/.iac-code
ENTRYPOINT ["iac-code"]
CMD ["acp", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
