package models

import "time"

// Windows of a usage alert (CONTRACT §24).
const (
	AlertWindowDay   = "day"
	AlertWindowMonth = "month"
)

// MeterAlert warns when a series of its meter (one account, and one group when the meter
// groups) reaches Threshold within a window (CONTRACT §24).
type MeterAlert struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	MeterID        string
	Threshold      string // exact decimal text, as MeterFigure.Value
	Window         string `gorm:"column:alert_window"` // AlertWindow*; "window" is reserved in SQL
	AccountID      string // "" = every account
	// Group is the JSON object of group_by values a series must have to be watched
	// ("{}": any group).
	Group       string
	Description string
	CreatedAt   time.Time
}

// MeterAlertFiring records that an alert fired for one series in one window: the row's
// key makes each firing happen once, whoever writes the figures and however often.
// EventID is the meter-threshold-crossed event that listed it; "" while held back by the
// environment's hourly cap.
type MeterAlertFiring struct {
	AlertID       string    `gorm:"primaryKey"`
	AccountID     string    `gorm:"primaryKey"`
	Groups        string    `gorm:"primaryKey"` // the series' group values, as MeterFigure.Groups
	WindowStart   time.Time `gorm:"primaryKey"`
	EnvironmentID string
	MeterID       string // the alert's meter: a deleted meter's purge removes its firings
	WindowEnd     time.Time
	Value         string
	AsOf          time.Time
	EventID       string
	CreatedAt     time.Time
}
