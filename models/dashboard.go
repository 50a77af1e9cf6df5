package models

import "time"

// DashboardSession is a signed-in dashboard user. The cookie carries a random token; only
// its SHA-256 is stored, so a database leak does not hand out sessions.
type DashboardSession struct {
	ID             string `gorm:"primaryKey"` // hex SHA-256 of the cookie token
	UserID         string
	OrganizationID string
	Environment    string // EnvLive or EnvSandbox: the switch shown on every page
	CSRFToken      string // echoed in every form and checked on every POST
	CreatedAt      time.Time
	ExpiresAt      time.Time
}
