package devstack

import (
	"maps"
	"time"

	"go.temporal.io/server/common/dynamicconfig"
)

// Throughput-oriented dynamic config for a small (2-core) dev machine. The
// aim is that Temporal's own rate limiters never bind before SQLite does, and
// that every avoidable hop (matching round trips, partition forwarding) is cut.
func dynamicConfig() dynamicconfig.StaticClient {
	c := dynamicconfig.StaticClient{}
	for _, part := range []dynamicconfig.StaticClient{fastPaths(), devLimits(), devWorkarounds()} {
		maps.Copy(c, part)
	}
	return c
}

// fastPaths are the settings that take round trips out of a run's path, as production
// sets them, and fair dispatch.
func fastPaths() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Return the first workflow task in the StartWorkflowExecution response
		// when the client asks for eager start: skips a matching round trip.
		dynamicconfig.EnableEagerWorkflowStart.Key(): true,
		// Hand activities back in the workflow-task completion response when the
		// worker has a free slot: skips another matching round trip per activity.
		dynamicconfig.EnableActivityEagerExecution.Key(): true,

		// Fair dispatch across environments (CONTRACT §17, docs/fairness.md): tasks
		// are matched by their Priority.FairnessKey, as in production
		// (deploy/temporal/dynamicconfig.yaml). Implies the new matcher.
		dynamicconfig.MatchingEnableFairness.Key(): true,
		// Paced endpoints (CONTRACT §27): one weight override per paced endpoint on
		// revops-webhooks-paced, and one per-key limiter each, above the most paced
		// endpoints a deployment may hold (REVOPS_PACED_ENDPOINTS, 2,000 by default), as
		// in production (deploy/temporal/dynamicconfig.yaml).
		dynamicconfig.MatchingMaxFairnessKeyWeightOverrides.Key(): PacedOverrides,
		dynamicconfig.MatchingFairnessKeyRateLimitCacheSize.Key(): PacedLimiterCache,

		// The history queues poll at most 20 times a second by default, so a workflow
		// started without eager start waited up to 50 ms for its transfer task
		// (docs/benchmarks.md): poll as often as there is work.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   1000,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      1000,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 1000,

		// One partition per task queue: with one matching host and two cores,
		// extra partitions only add forwarding and empty polls between them.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	}
}

// devLimits lift the limits that protect a shared cluster: on a dev box the single
// SQLite writer is the real one.
func devLimits() dynamicconfig.StaticClient {
	const plenty = 50_000 // effectively "no limit" at dev-box scale

	return dynamicconfig.StaticClient{
		// Persistence QPS caps (defaults 2k-9k, worker 500) exist to protect a
		// shared database; the single SQLite writer is the real limit here.
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): plenty,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  plenty,
		dynamicconfig.MatchingPersistenceMaxQPS.Key(): plenty,
		dynamicconfig.WorkerPersistenceMaxQPS.Key():   plenty,

		// Request rate limits per host (frontend 2400, history 3000, matching
		// 1200): a benchmark at 200 workflows/s with polls, completions and
		// heartbeats gets close to the matching and frontend defaults.
		dynamicconfig.FrontendRPS.Key():                        plenty,
		dynamicconfig.FrontendMaxNamespaceRPSPerInstance.Key(): plenty,
		dynamicconfig.HistoryRPS.Key():                         plenty,
		dynamicconfig.MatchingRPS.Key():                        plenty,
		// Visibility API limit (default 10/s) is hit by the UI's auto refresh
		// plus a test or benchmark polling list/count queries.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 1_000,

		// Bound the mutable-state cache (default 128k entries) the way the
		// Temporal CLI dev server does: plenty for a dev box, far less memory.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8192,
	}
}

// devWorkarounds work around what a server embedded for a while and stopped meets.
func devWorkarounds() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Workaround for a lost-wakeup in the history service (v1.32): the
		// long poll behind WorkflowRun.Get / GetWorkflowExecutionHistory
		// subscribes with a 1-slot channel and notifications that find it
		// full are dropped, so a workflow that finishes within a few ms of its
		// previous event can leave the waiter asleep until the poll expires
		// (default 20s). On a busy 2-core box that hit many short workflows
		// and held a 64-caller start-and-wait benchmark to 20-50 workflows/s.
		// Expiring the poll every 200ms bounds the stall; idle waiters
		// re-poll five times a second, a cheap cached read (measured: same
		// CPU per workflow as 500ms, ~20% more throughput; 100ms costs more).
		dynamicconfig.HistoryLongPollExpirationInterval.Key(): 200 * time.Millisecond,

		// Namespace changes (search attribute aliases with SQL visibility live
		// in the namespace record) reach every service within this interval.
		// Start waits for it after registering new attributes, so it is kept
		// short; the refresh is one tiny SQLite read.
		dynamicconfig.NamespaceCacheRefreshInterval.Key(): namespaceRefresh,

		// The worker service starts SDK workers for these background jobs and
		// never stops them (Temporal marks this as a TODO), so after Stop they
		// would keep polling the frontend address forever, and poll the next
		// stack started on the same port. They are maintenance for long-lived
		// clusters: the task queue scanner trims expired task rows, the
		// history scanner orphaned history branches.
		dynamicconfig.TaskQueueScannerEnabled.Key(): false,
		dynamicconfig.HistoryScannerEnabled.Key():   false,
		// Same leak; without the worker, history applies parent close
		// policies itself while processing the parent's close, so child
		// workflows are still terminated/cancelled as requested.
		dynamicconfig.EnableParentClosePolicyWorker.Key(): false,

		// Deliberately NOT set: system.forceSearchAttributesCacheRefreshOnRead.
		// With SQL visibility it makes every alias lookup (every
		// StartWorkflowExecution and list query) re-read the namespace row
		// from SQLite under a process-wide lock: measured ~14% more CPU per
		// workflow. Attributes are registered during Start, which waits out
		// namespaceRefresh instead, so they are usable when Start returns.
	}
}

// namespaceRefresh is how often each service reloads namespaces.
const namespaceRefresh = time.Second

// The paced queue's sizes in the shipped dynamic configs (this one and
// deploy/temporal/dynamicconfig.yaml, whose values a test compares): room for
// REVOPS_PACED_ENDPOINTS' default of 2,000 paced endpoints and the writes that race past
// its count, and twice that many per-key limiters (the cache also holds unpaced keys'
// limiters while their tasks pass).
const (
	PacedOverrides    = 2500
	PacedLimiterCache = 5000
)
