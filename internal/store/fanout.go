package store

import (
	"slices"
	"sort"

	"github.com/revops/revops/models"
)

// addToFanout adds a delivery just created, with its endpoint's destination, to its
// event's fanout where EventDeliveries would list it (created_at, id), so that the start
// of a fresh event, which reads nothing back, sends Temporal exactly what a start from
// the database sends.
func addToFanout(f *models.Fanout, d models.WebhookDelivery, ep models.WebhookEndpoint) {
	i := sort.Search(len(f.Deliveries), func(i int) bool { return listedAfter(f.Deliveries[i], d) })
	f.Deliveries = slices.Insert(f.Deliveries, i, d)
	f.Destinations = slices.Insert(f.Destinations, i, models.DestinationOf(ep))
}

// listedAfter tells whether a comes after b in "ORDER BY created_at, id" (ids are UUIDs:
// their byte order is their order in any collation, hyphens standing at the same places).
func listedAfter(a, b models.WebhookDelivery) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}
