package activities

import (
	"time"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/models"
)

// observe feeds the Prometheus delivery metrics once an attempt and its event status
// are recorded: the attempt by outcome and duration, and the event when its status is
// final (every status but retrying).
func observe(eventType string, att *models.DeliveryAttempt, status string) {
	metrics.DeliveryAttempt(att.Outcome, time.Duration(att.DurationMS)*time.Millisecond)
	if status != models.EventRetrying {
		metrics.EventFinal(eventType, status)
	}
}
