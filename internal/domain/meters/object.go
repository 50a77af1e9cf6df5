package meters

import (
	"time"

	"github.com/revops/revops/internal/platform/apiobject"
	"github.com/revops/revops/models"
)

// Object is a meter as the API returns it (CONTRACT §18): the answer of its reads and
// of the writes that keep it (Create, SetDescription).
type Object struct {
	ID          string       `json:"id"`
	Object      string       `json:"object"`
	Key         string       `json:"key"`
	Description string       `json:"description"`
	Filter      ObjectFilter `json:"filter"`
	Aggregation string       `json:"aggregation"`
	ValueKey    *string      `json:"value_key"`
	GroupBy     []string     `json:"group_by"`
	Status      string       `json:"status"`
	CreatedAt   string       `json:"created_at"`
	UpdatedAt   string       `json:"updated_at"`
}

// ObjectFilter is the usage a meter counts.
type ObjectFilter struct {
	MetricName string  `json:"metric_name"`
	Product    *string `json:"product"` // null: any product
}

// ToObject converts a stored meter to the API form.
func ToObject(m models.Meter) Object {
	o := Object{
		ID: m.ID, Object: "meter", Key: m.Key, Description: m.Description,
		Filter:      ObjectFilter{MetricName: m.FilterMetricName, Product: apiobject.NonEmpty(m.FilterProduct)},
		Aggregation: m.Aggregation, ValueKey: apiobject.NonEmpty(m.ValueKey), GroupBy: m.GroupBy, Status: m.Status,
		CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: m.UpdatedAt.UTC().Format(time.RFC3339Nano),
	}
	if o.GroupBy == nil {
		o.GroupBy = []string{}
	}
	return o
}

// Deleted is the answer of Delete. A meter is removed, not kept in a final state (its
// figures go with it), so the answer is the deleted stub of the other hard delete
// (webhook endpoints, CONTRACT §13), not the object as accounts' soft delete answers.
type Deleted = apiobject.Deleted

// ToDeleted is the answer of m's deletion.
func ToDeleted(m models.Meter) Deleted { return apiobject.DeletedOf("meter", m.ID) }
