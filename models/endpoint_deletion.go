package models

import "time"

// EndpointDeletion is a deleted webhook endpoint whose unfinished deliveries are still to
// end skipped (CONTRACT §13, §21): the endpoint's row is gone (it is 404 everywhere and
// takes no new delivery), this row stays until its EndpointDeletion workflow has ended
// every such delivery, and it counts toward the 16 endpoints of its environment meanwhile.
type EndpointDeletion struct {
	EndpointID     string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	CreatedAt      time.Time
	StartedAt      *time.Time // when its EndpointDeletion workflow was started
}
