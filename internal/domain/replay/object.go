package replay

import (
	"time"

	"github.com/revops/revops/models"
)

// JobObject is a bulk replay job as the API returns it (CONTRACT §9, §16): the answer
// of its creation, which CreateJob keeps in its transaction (CONTRACT §14), and of its
// reads.
type JobObject struct {
	ID         string         `json:"id"`
	Object     string         `json:"object"`
	Status     string         `json:"status"`
	Matched    int            `json:"matched"`
	Replayed   int            `json:"replayed"`
	Failed     int            `json:"failed"` // could not be replayed: delivery in progress, endpoint deleted
	Filter     map[string]any `json:"filter"`
	CreatedAt  string         `json:"created_at"`
	FinishedAt *string        `json:"finished_at"`
}

// ToJobObject converts a stored job to the API form: its filter holds the criteria it
// was given, and created_before always (frozen at its creation at the latest).
func ToJobObject(j models.ReplayJob) JobObject {
	filter := map[string]any{"created_before": j.CreatedBefore.UTC().Format(time.RFC3339Nano)}
	for k, v := range map[string]string{"status": j.FilterStatus, "type": j.FilterType, "endpoint_id": j.FilterEndpointID} {
		if v != "" {
			filter[k] = v
		}
	}
	if j.CreatedAfter != nil {
		filter["created_after"] = j.CreatedAfter.UTC().Format(time.RFC3339Nano)
	}
	o := JobObject{ID: j.ID, Object: "replay_job", Status: j.Status, Matched: j.Matched,
		Replayed: j.Replayed, Failed: j.Failed, Filter: filter, CreatedAt: j.CreatedAt.UTC().Format(time.RFC3339Nano)}
	if j.FinishedAt != nil {
		at := j.FinishedAt.UTC().Format(time.RFC3339Nano)
		o.FinishedAt = &at
	}
	return o
}
