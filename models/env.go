package models

// Env identifies the environment a request acts in (CONTRACT §17: an organization's live
// or sandbox data, isolated from every other). Every function reading or writing
// environment data takes one. It lives here, below the store, so that the API and the
// domain packages name a tenant without importing the store.
type Env struct {
	OrganizationID string
	ID             string
	Name           string // live or sandbox
}
