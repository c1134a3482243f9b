# pbm-referee as a container: the daemon, configured by /data/referee.toml.
#
#   docker build -t pbm-referee .
#   docker run --rm -v "$PWD/data:/data" pbm-referee init
#   docker run --rm -v "$PWD/data:/data" pbm-referee game new goofspiel --player ... --player ...
#   docker run -d --name referee -v "$PWD/data:/data" pbm-referee          # the daemon
#   docker run --rm pbm-referee demo                                       # no config needed
#
# Relative paths in the config (the SQLite database, Maildirs) are taken from
# /data, the folder the config is in. `docker stop` sends SIGTERM, on which
# the daemon finishes its pass and stops cleanly.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md config.example.toml ./
# referee/templates and referee/migrations link to these; the wheel carries copies.
COPY referee referee
COPY templates templates
COPY migrations migrations
RUN pip install --no-cache-dir '.[postgres]' \
    && useradd --system --home-dir /data --shell /usr/sbin/nologin referee \
    && mkdir -p /data && chown referee /data

USER referee
WORKDIR /data
VOLUME ["/data"]
ENTRYPOINT ["referee", "--config", "/data/referee.toml"]
CMD ["run"]
