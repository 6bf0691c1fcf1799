# healthctl as a container image: one static binary on distroless (no shell,
# no curl), on PATH as /usr/local/bin/healthctl. Multi-arch with buildx (the
# Go build runs on the builder's platform and cross-compiles):
#   docker buildx build --platform linux/amd64,linux/arm64 -t healthctl .
#   docker build -t healthctl .                                 (one arch)
# Also the stage to copy from for a HEALTHCHECK in your own image:
#   COPY --from=healthctl /usr/local/bin/healthctl /usr/local/bin/healthctl
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux TARGETARCH VERSION=dev COMMIT=unknown DATE=unknown
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/healthctl/healthctl/internal/version.version=${VERSION} -X github.com/healthctl/healthctl/internal/version.commit=${COMMIT} -X github.com/healthctl/healthctl/internal/version.date=${DATE}" \
      -o /out/healthctl ./cmd/healthctl

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev COMMIT=unknown DATE=unknown
LABEL org.opencontainers.image.title="healthctl" \
      org.opencontainers.image.description="Probe HTTP health endpoints and say why they are not healthy" \
      org.opencontainers.image.source="https://github.com/healthctl/healthctl" \
      org.opencontainers.image.url="https://github.com/healthctl/healthctl" \
      org.opencontainers.image.documentation="https://github.com/healthctl/healthctl#readme" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${DATE}"
COPY --from=build /out/healthctl /usr/local/bin/healthctl
ENTRYPOINT ["/usr/local/bin/healthctl"]
CMD ["--help"]
