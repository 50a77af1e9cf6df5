// Package models holds the GORM models: the rows Revops persists. They carry no behaviour;
// API request/response types live in api/ and converters sit at that boundary.
package models

import "time"

// Organization is a customer of Revops (the tenant). It owns users, keys and exactly two
// environments.
type Organization struct {
	ID        string `gorm:"primaryKey"`
	Name      string
	CreatedAt time.Time
}

// Environment names. Every piece of customer data lives in exactly one environment.
const (
	EnvLive    = "live"
	EnvSandbox = "sandbox"
)

// Environment is one of an organization's two isolated data spaces.
type Environment struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Name           string // EnvLive or EnvSandbox
	CreatedAt      time.Time
}

// OrganizationUser signs in to the dashboard.
type OrganizationUser struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Email          string
	PasswordHash   string // bcrypt
	CreatedAt      time.Time
}

// API key types.
const (
	KeyPublic = "public"
	KeySecret = "secret"
)

// APIKey is stored only as a SHA-256 hash; the full key is shown once, at creation.
type APIKey struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	Environment    string // live or sandbox, denormalised for listings
	Type           string // KeyPublic or KeySecret
	Prefix         string // "sk_live_"
	Last4          string
	Hash           string // hex SHA-256 of the full key
	CreatedAt      time.Time
	ExpiresAt      *time.Time // set when rolled
	RevokedAt      *time.Time
	LastUsedAt     *time.Time
}

// TableName keeps the table name readable (GORM would say "api_keys" anyway; explicit is clearer).
func (APIKey) TableName() string { return "api_keys" }
