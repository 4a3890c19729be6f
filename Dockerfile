# The hill in a container: the bot (and its web report) as a non-root user,
# the hill's data in a volume, the configuration mounted in:
#
#   docker build -t bfjoust-hill .
#   docker run -v hill-data:/hill/var -v $PWD/config.toml:/hill/config.toml:ro \
#       -p 8080:8080 bfjoust-hill
#
# The mounted config.toml keeps `data_dir = "var"` (that is /hill/var) and
# sets `[web] bind = "0.0.0.0"` so that the published port reaches it.

FROM python:3.11-slim-bookworm AS build
# a C compiler for the engine, and clang, lld and the WASI libc for its
# WebAssembly build (the Lab's engine.wasm, which the wheel carries);
# Debian's current security updates, unpinned
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev make \
        clang lld wasi-libc libclang-rt-14-dev-wasm32 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md Makefile ./
COPY scripts ./scripts
COPY hill ./hill
RUN make hill/web/static/lab/engine.wasm
COPY bot ./bot
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
# git: the hill's history is a git repository (GitPython runs git)
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 hill \
    && mkdir -p /hill/var \
    && chown hill:hill /hill/var
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001:10001
WORKDIR /hill
VOLUME ["/hill/var"]
EXPOSE 8080
ENTRYPOINT ["bfjoust"]
CMD ["bot", "--config", "/hill/config.toml"]
