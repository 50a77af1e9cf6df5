// Package usagebench measures usage ingestion end to end (real HTTP, real PostgreSQL)
// against a PostgreSQL COPY baseline, and (BenchmarkScale) ingest and reads on a database
// loaded with 10M usage rows and 1M events. It holds benchmarks only; see
// docs/benchmarks.md:
//
//	REVOPS_TEST_DATABASE_URL=postgres://… go test ./internal/testkit/usagebench -run '^$' -bench Ingest -benchtime 200x
//	REVOPS_SCALE_DB=revops_scale REVOPS_TEST_DATABASE_URL=postgres://… go test ./internal/testkit/usagebench -run '^$' -bench Scale -benchtime 1x -timeout 2h
package usagebench
