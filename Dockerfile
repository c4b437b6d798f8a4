# A CI image with vx and git. The binary comes from the release build (release.yml lays it
# out as dist/docker/vx-linux-<arch>); build/binary.py --mode onefile makes one locally:
#   mkdir -p dist/docker && cp dist/binary/vx dist/docker/vx-linux-amd64
#   docker build -t vx .
FROM debian:bookworm-slim
ARG TARGETARCH=amd64
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --chmod=755 dist/docker/vx-linux-${TARGETARCH} /usr/local/bin/vx
# The onefile binary unpacks once into its cache dir; doing it here keeps every container's
# first start as fast as the next.
ENV XDG_CACHE_HOME=/var/cache
RUN vx --version
WORKDIR /work
ENTRYPOINT ["vx"]
