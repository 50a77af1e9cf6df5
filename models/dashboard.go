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

// LoginDevice is a browser that signed in as a user: the device token of OWASP's "device
// cookies" (CONTRACT §17). Its logins count against a budget of its own rather than its
// address's, so people sharing the owner's address cannot keep the owner's browser out.
// The cookie carries a random token; only its SHA-256 is stored.
type LoginDevice struct {
	ID        string `gorm:"primaryKey"` // hex SHA-256 of the cookie token
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
}
