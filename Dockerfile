# healthctl as a container image: one static binary on distroless (no shell,
# no curl), on PATH as /usr/local/bin/healthctl, with its licence in
# /usr/share/doc/healthctl/LICENSE. Multi-arch with buildx (the Go build runs
# on the builder's platform and cross-compiles):
#   docker buildx build --platform linux/amd64,linux/arm64 -t healthctl .
#   docker build -t healthctl .                                 (one arch)
# The version needs no build arguments: Go stamps the checkout's commit (and
# its tag, if HEAD has one) into the binary, and `healthctl version` reads
# it. A context without .git builds too, and says "dev".
# Also the image to copy from for a HEALTHCHECK in your own image:
#   COPY --from=healthctl /usr/local/bin/healthctl /usr/local/bin/healthctl
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=auto -ldflags "-s -w" \
      -o /out/healthctl ./cmd/healthctl

FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.title="healthctl" \
      org.opencontainers.image.description="Probe HTTP health endpoints and say why they are not healthy" \
      org.opencontainers.image.source="https://github.com/healthctl/healthctl" \
      org.opencontainers.image.url="https://github.com/healthctl/healthctl" \
      org.opencontainers.image.documentation="https://github.com/healthctl/healthctl#readme" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /src/LICENSE /usr/share/doc/healthctl/LICENSE
COPY --from=build /out/healthctl /usr/local/bin/healthctl
ENTRYPOINT ["/usr/local/bin/healthctl"]
CMD ["--help"]
