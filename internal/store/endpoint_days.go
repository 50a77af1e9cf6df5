package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/revops/revops/models"
)

// EndpointDeliveryCount is one row of EndpointDeliveryDays' query.
type EndpointDeliveryCount struct {
	EndpointID string
	Day        int // 0 = the oldest of the days, days-1 = today
	Status     string
	N          int
}

// EndpointDeliveryDays counts, in one query grouping by endpoint, day and status, the
// delivered and failed deliveries of every endpoint of the environment over the last
// `days` UTC days up to now's (the dashboard's chart). Days are bucketed by comparing
// created_at with each day's midnight, which reads the same on PostgreSQL and SQLite and
// uses the (environment_id, endpoint_id, status, created_at) index.
func (s *Store) EndpointDeliveryDays(ctx context.Context, env Env, now time.Time, days int) ([]EndpointDeliveryCount, error) {
	if days < 1 {
		return nil, nil
	}
	first := DayStart(now).AddDate(0, 0, -(days - 1))
	var b strings.Builder
	args := make([]any, 0, days)
	b.WriteString("endpoint_id, CASE")
	for i := days - 1; i > 0; i-- {
		b.WriteString(" WHEN created_at >= ? THEN ")
		fmt.Fprint(&b, i)
		args = append(args, first.AddDate(0, 0, i))
	}
	b.WriteString(" ELSE 0 END AS day, status, COUNT(*) AS n")
	var rows []EndpointDeliveryCount
	err := s.in(ctx, env).Model(&models.WebhookDelivery{}).
		Select(b.String(), args...).
		Where("status IN ? AND created_at >= ?", []string{models.EventDelivered, models.EventFailed}, first).
		Group("1, 2, 3").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("deliveries per endpoint and day: %w", err)
	}
	return rows, nil
}

// DayStart is the midnight UTC that begins t's day.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
