package app

import (
	"log/slog"
	"time"

	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/workflows"
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
		SearchAttributes: workflows.SearchAttributeTypes,
		Schedules: []temporalsetup.Schedule{{
			ID:         workflows.RetentionScheduleID,
			Every:      workflows.RetentionEvery,
			Workflow:   workflows.RetentionWorkflowName,
			TaskQueue:  workflows.SystemTaskQueue, // CONTRACT §17; an older Schedule is updated
			WorkflowID: workflows.RetentionWorkflowID,
			Args:       []any{workflows.RetentionInput{Retention: cfg.Retention}},
		}, {
			// CONTRACT §23: failing spells and delivery-exhausted minutes, every minute.
			ID:         workflows.HealthCheckScheduleID,
			Every:      workflows.HealthCheckEvery,
			Workflow:   workflows.HealthCheckWorkflowName,
			TaskQueue:  workflows.SystemTaskQueue,
			WorkflowID: workflows.HealthCheckWorkflowID,
			Args:       []any{workflows.HealthCheckInput{}},
		}},
		Settle: settle,
		Log:    log,
	}
}
