// Package usagebench measures usage ingestion end to end (real HTTP, real PostgreSQL)
// against a PostgreSQL COPY baseline. It holds benchmarks only; see docs/benchmarks.md:
//
//	REVOPS_TEST_DATABASE_URL=postgres://… go test ./internal/usage/usagebench -run '^$' -bench . -benchtime 200x
package usagebench
