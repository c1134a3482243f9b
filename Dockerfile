# pbm-referee as a container: the daemon, configured by /data/referee.toml.
#
#   docker build -t pbm-referee .
#   docker run --rm -v "$PWD/data:/data" pbm-referee init
#   docker run --rm -v "$PWD/data:/data" pbm-referee game new goofspiel --player ... --player ...
#   docker run -d --name referee -v "$PWD/data:/data" pbm-referee          # the daemon
#   docker run --rm pbm-referee demo                                       # no config needed
#
# The volume /data holds everything the referee keeps: referee.toml, the
# SQLite database (and its -wal/-shm files), the lock file, Maildirs of a dry
# run and the game pages. Relative paths in the config are taken from /data,
# the folder the config is in. Back it up as README.md says ("Running in
# production"). Passwords may come from Docker secrets instead of the file:
#   password_file = "/run/secrets/imap_password"
# `docker stop` sends SIGTERM, on which the daemon finishes its pass and stops
# cleanly. The health check fails when no pass completed for 5 minutes (the
# daemon completes one a minute at least).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md LICENSE config.example.toml ./
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
HEALTHCHECK --interval=1m --timeout=30s --start-period=2m --retries=3 \
    CMD ["referee", "--config", "/data/referee.toml", "status", "--max-age", "5m"]
ENTRYPOINT ["referee", "--config", "/data/referee.toml"]
# The daemon, logging a line per mail, send and fired deadline (docker logs).
CMD ["--log-level", "info", "run"]
