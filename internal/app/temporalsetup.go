package app

import (
	"log/slog"
	"time"

	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/workflows/wire"
)

// ServerNamespaceRefresh is how often a Temporal server's services reload namespaces
// (the server's default namespace cache refresh): `revops temporal-setup` waits that long
// after adding search attributes, so the api and worker it precedes can use them at once.
const ServerNamespaceRefresh = 10 * time.Second

// TemporalSetup is what `revops temporal-setup` and `revops dev` bring the namespace to
// (CONTRACT §16): its retention, the search attributes with their types, the daily
// retention Schedule and the endpoint health check's every minute.
func TemporalSetup(cfg config.Config, log *slog.Logger, settle time.Duration) temporalsetup.Options {
	return temporalsetup.Options{
		Namespace:        cfg.TemporalNamespace,
		Retention:        cfg.Retention,
		SearchAttributes: wire.SearchAttributeTypes,
		Schedules: []temporalsetup.Schedule{{
			ID:         wire.RetentionScheduleID,
			Every:      wire.RetentionEvery,
			Workflow:   wire.RetentionWorkflowName,
			TaskQueue:  wire.SystemTaskQueue, // CONTRACT §17; an older Schedule is updated
			WorkflowID: wire.RetentionWorkflowID,
			Args:       []any{wire.RetentionInput{Retention: cfg.Retention}},
		}, {
			// CONTRACT §23: failing spells and delivery-exhausted minutes, every minute.
			ID:         wire.HealthCheckScheduleID,
			Every:      wire.HealthCheckEvery,
			Workflow:   wire.HealthCheckWorkflowName,
			TaskQueue:  wire.SystemTaskQueue,
			WorkflowID: wire.HealthCheckWorkflowID,
			Args:       []any{wire.HealthCheckInput{}},
		}},
		// CONTRACT §27: every paced endpoint's key is limited to this times its weight.
		PacedQueue:   wire.PacedTaskQueue,
		PacedKeyRate: wire.PacedKeyRate,
		Settle:       settle,
		Log:          log,
	}
}
