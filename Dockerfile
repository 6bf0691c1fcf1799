# healthctl as a container image: one static binary on distroless (no shell,
# no curl). Also the stage to copy from for a HEALTHCHECK in your own image:
#   docker build -t healthctl .
#   COPY --from=healthctl /healthctl /healthctl       (in your Dockerfile)
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/healthctl/healthctl/internal/version.version=${VERSION}" -o /healthctl ./cmd/healthctl \
 && /healthctl version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /healthctl /healthctl
ENTRYPOINT ["/healthctl"]
CMD ["--help"]
