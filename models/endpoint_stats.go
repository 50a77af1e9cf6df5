package models

// LatencyBucketsMS are the upper bounds, in milliseconds, of the fixed latency buckets of
// an endpoint's stats (CONTRACT §23): an attempt lasting d ms counts in the first bucket
// whose bound is ≥ d, or in the open bucket above the last bound.
var LatencyBucketsMS = [...]int64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000}

// LatencyBuckets is how many buckets a rollup counts: the bounded ones and the open one.
const LatencyBuckets = len(LatencyBucketsMS) + 1

// AttemptTimeoutPrefix begins the error of an attempt whose exchange was cut by its
// deadline (the sender writes it; stats count such failed attempts as timeouts).
const AttemptTimeoutPrefix = "timeout after "
