# syntax=docker/dockerfile:1
# Build: docker build -t revops .   (see README, "Production stack")
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# cgo stays on: the embedded SQLite driver (gorm.io/driver/sqlite) needs it.
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=$(date -u +%Y%m%d)" -o /out/revops ./cmd/revops

FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/revops /usr/local/bin/revops
USER nonroot
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/revops"]
CMD ["serve"]
