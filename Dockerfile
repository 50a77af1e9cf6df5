# syntax=docker/dockerfile:1
# Build: docker build -t revops .   (see README, "Production stack")
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The Go client (clients/go) is a module of its own that go.mod replaces with the local
# directory: its go.mod must be there before the download.
COPY clients/go/go.mod clients/go/
RUN go mod download
COPY . .
# cgo stays on: the embedded SQLite driver (gorm.io/driver/sqlite) needs it. The version
# comes from the build info (the VCS revision of the copied .git, the Temporal modules);
# --build-arg REVOPS_VERSION=v1.2.3 names a release.
ARG REVOPS_VERSION=
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X github.com/revops/revops/internal/platform/buildinfo.version=${REVOPS_VERSION}" -o /out/revops ./cmd/revops

FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/revops /usr/local/bin/revops
USER nonroot
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/revops"]
CMD ["serve"]
