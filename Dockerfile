# A CI image with vx and git. The binary is the standalone folder (the `vx` executable beside
# the libraries it loads) from the release build; release.yml unpacks each platform's tarball
# as dist/docker/vx-linux-<arch>/. Locally:
#   python3 build/binary.py --out dist/binary
#   mkdir -p dist/docker && cp -r dist/binary/vx_main.dist dist/docker/vx-linux-amd64
#   docker build -t vx .
FROM debian:bookworm-slim
ARG TARGETARCH=amd64
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# A mounted checkout is owned by the host's user: git would refuse it as "dubious ownership".
COPY build/docker/gitconfig /etc/gitconfig
COPY dist/docker/vx-linux-${TARGETARCH}/ /opt/vx/
RUN chmod 755 /opt/vx/vx && ln -s /opt/vx/vx /usr/local/bin/vx
RUN vx --version
WORKDIR /work
ENTRYPOINT ["vx"]
