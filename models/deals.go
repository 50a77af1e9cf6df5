package models

import "time"

// Account statuses (CONTRACT §6).
const (
	AccountDraft         = "draft"
	AccountActive        = "active"
	AccountDeprovisioned = "deprovisioned"
)

// Account is a customer account of an organization (never the tenant itself).
type Account struct {
	ID             string `gorm:"primaryKey"` // uuid
	OrganizationID string
	EnvironmentID  string
	Name           string
	ExternalID     *string
	Domain         *string
	BillingEmail   *string
	Status         string
	Properties     string // JSON object text: {string: string|number|bool}, keys sorted
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Deal statuses (CONTRACT §7).
const (
	DealDraft           = "draft"
	DealPendingApproval = "pending_approval"
	DealApproved        = "approved"
	DealSigned          = "signed"
	DealActive          = "active"
	DealVoid            = "void"
)

// Deal belongs to one Account of the same environment. Prices are kept as the decimal
// strings the caller sent (never floats); nil means unset (null in the API).
type Deal struct {
	ID                        string `gorm:"primaryKey"` // uuid
	OrganizationID            string
	EnvironmentID             string
	AccountID                 string // the customer
	Status                    string
	ContractActivatesDate     *string // YYYY-MM-DD
	NetPrice                  *string
	NetPriceCurrency          *string
	NetPricePrecision         *string
	OriginalNetPrice          *string
	OriginalNetPriceCurrency  *string
	OriginalNetPricePrecision *string
	OpportunityID             *string
	SignedContractURL         *string
	Skus                      string // JSON array text of the API's sku items (ids assigned)
	Terms                     string // JSON array text of the API's term items (ids assigned)
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
}
