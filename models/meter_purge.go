package models

import "time"

// MeterPurge is a deleted meter whose figures are still being purged (CONTRACT §21): the
// meter's row is gone (its key is free, it is 404 everywhere), this row stays until its
// MeterPurge workflow has removed every figure, and it counts toward the 32 meters of
// its environment (§18) meanwhile.
type MeterPurge struct {
	MeterID        string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	MeterKey       string // the deleted meter's key, for the workflow's summary
	CreatedAt      time.Time
	StartedAt      *time.Time // when its MeterPurge workflow was started
}
