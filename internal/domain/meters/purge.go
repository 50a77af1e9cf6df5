package meters

import (
	"context"

	"github.com/revops/revops/models"
)

// PurgeRows is at most how many figure rows one page of a deleted meter's purge deletes
// (CONTRACT §21): a short transaction, a bounded amount of WAL, whatever the meter's size.
const PurgeRows = 5000

// PurgeStarter starts a deleted meter's MeterPurge workflow once its deletion has
// committed, without making the request wait (dispatch.MeterPurges): a start that fails
// is left to the sweeper.
type PurgeStarter interface {
	StartMeterPurgeDetached(ctx context.Context, p models.MeterPurge)
}

// PurgeOf is the purge a deleted meter's row records (store.DeleteMeter).
func PurgeOf(m models.Meter) models.MeterPurge {
	return models.MeterPurge{MeterID: m.ID, OrganizationID: m.OrganizationID, EnvironmentID: m.EnvironmentID, MeterKey: m.Key}
}
