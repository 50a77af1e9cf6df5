// Package meterbench measures usage meters (CONTRACT §18, issue 21) end to end: real HTTP
// in front of the real API, real PostgreSQL, and the durable consumer
// (meters.Consumer) running beside the API as a worker process runs it. It holds
// benchmarks only; each is skipped unless its variable is set. See docs/benchmarks.md,
// "Usage meters (issue 21)":
//
//	# ingest without and with three meters, alternating, and the as_of lag (≈ 2–3 min)
//	REVOPS_METER_INGEST=1 REVOPS_TEST_DATABASE_URL=postgres://… \
//	  go test ./internal/testkit/meterbench -run '^$' -bench MeterIngest -benchtime 1x -timeout 30m
//
//	# values reads on REVOPS_METER_ROWS (default 10M) counted rows; the database is
//	# created, loaded and counted once and kept for the next run (drop it afterwards)
//	REVOPS_METER_DB=revops_meters REVOPS_TEST_DATABASE_URL=postgres://… \
//	  go test ./internal/testkit/meterbench -run '^$' -bench MeterValues -benchtime 1x -timeout 3h
package meterbench
