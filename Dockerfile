# pbm-referee as a container: the daemon, configured by /data/referee.toml.
# README.md, "Running in Docker", has the whole set-up; in short:
#
#   docker build -t pbm-referee .
#   mkdir data && cp config.example.toml data/referee.toml      # then edit it
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD/data:/data" pbm-referee init
#   docker run -d --name referee --user "$(id -u):$(id -g)" --stop-timeout 90 \
#       -v "$PWD/data:/data" pbm-referee                         # the daemon
#   docker run --rm pbm-referee demo                            # no config needed
#
# The volume /data holds everything the referee keeps: referee.toml, the
# SQLite database (and its -wal/-shm files), the lock file, Maildirs of a dry
# run and the game pages. Relative paths in the config are taken from /data.
# The image runs as the user 10001, who owns the image's /data (so a named
# volume works as it is); a folder of the host mounted there belongs to its
# owner, so run as that owner: --user "$(id -u):$(id -g)".
#
# The base is pinned by its full version and by the digest of its
# multi-architecture index, the dependencies by deploy/requirements.lock
# (versions and hashes; its first lines say how to make it again).
FROM python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /app

# The dependencies in a layer of their own: a change of the code reuses it.
COPY deploy/requirements.lock ./
RUN pip install --require-hashes -r requirements.lock

# The project itself, without dependencies, built with the locked setuptools.
# referee/templates and referee/migrations link to these; the install copies them.
COPY pyproject.toml README.md LICENSE config.example.toml ./
COPY referee referee
COPY templates templates
COPY migrations migrations
RUN pip install --no-deps --no-build-isolation . \
    && groupadd --system --gid 10001 referee \
    && useradd --system --uid 10001 --gid referee --home-dir /data \
        --shell /usr/sbin/nologin referee \
    && install -d -o referee -g referee -m 0750 /data

USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
# One row read, whatever the number of games: fails when no pass completed
# for 5 minutes (the daemon completes one a minute).
HEALTHCHECK --interval=1m --timeout=30s --start-period=2m --retries=3 \
    CMD ["referee", "--config", "/data/referee.toml", "health", "--max-age", "5m"]
# On SIGTERM the daemon finishes the mail it is at and stops; a server that
# does not answer holds it at most [smtp] timeout (60 s): give `docker stop`
# 90 s (`--stop-timeout 90` above, `stop_grace_period: 90s` in compose).
STOPSIGNAL SIGTERM
ENTRYPOINT ["referee", "--config", "/data/referee.toml"]
# The daemon at info: a line per mail, send and fired deadline (docker logs).
CMD ["--log-level", "info", "run"]
