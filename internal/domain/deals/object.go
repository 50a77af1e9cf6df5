package deals

import (
	"encoding/json"

	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Customer is the deal's snapshot of its Account.
type Customer struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	ExternalID   *string `json:"external_id"`
	BillingEmail *string `json:"billing_email"`
}

// Object is a deal as the API returns it and webhooks carry it (CONTRACT §7).
type Object struct {
	ID                        string          `json:"id"`
	Object                    string          `json:"object"`
	Status                    string          `json:"status"`
	Customer                  Customer        `json:"customer"`
	ContractActivatesDate     *string         `json:"contract_activates_date"`
	NetPrice                  *string         `json:"net_price"`
	NetPriceCurrency          *string         `json:"net_price_currency"`
	NetPricePrecision         *string         `json:"net_price_precision"`
	OriginalNetPrice          *string         `json:"original_net_price"`
	OriginalNetPriceCurrency  *string         `json:"original_net_price_currency"`
	OriginalNetPricePrecision *string         `json:"original_net_price_precision"`
	OpportunityID             *string         `json:"opportunity_id"`
	SignedContractURL         *string         `json:"signed_contract_url"`
	Skus                      json.RawMessage `json:"skus"`
	Terms                     json.RawMessage `json:"terms"`
	CreatedAt                 string          `json:"created_at"`
	UpdatedAt                 string          `json:"updated_at"`
}

// ToObject converts a stored deal and its customer account to the API form.
func ToObject(d models.Deal, customer models.Account) Object {
	return Object{
		ID: d.ID, Object: "deal", Status: d.Status,
		Customer:              Customer{ID: customer.ID, Name: customer.Name, ExternalID: customer.ExternalID, BillingEmail: customer.BillingEmail},
		ContractActivatesDate: d.ContractActivatesDate,
		NetPrice:              d.NetPrice, NetPriceCurrency: d.NetPriceCurrency, NetPricePrecision: d.NetPricePrecision,
		OriginalNetPrice: d.OriginalNetPrice, OriginalNetPriceCurrency: d.OriginalNetPriceCurrency,
		OriginalNetPricePrecision: d.OriginalNetPricePrecision,
		OpportunityID:             d.OpportunityID, SignedContractURL: d.SignedContractURL,
		Skus: items(d.Skus), Terms: items(d.Terms),
		CreatedAt: d.CreatedAt.UTC().Format(accounts.TimeFormat), UpdatedAt: d.UpdatedAt.UTC().Format(accounts.TimeFormat),
	}
}

func items(text string) json.RawMessage {
	if text == "" {
		return json.RawMessage("[]")
	}
	return json.RawMessage(text)
}

// emits turns the deal event types of a move into events carrying the deal after it.
func emits(types []string, obj Object) []store.Emit {
	out := make([]store.Emit, len(types))
	for i, t := range types {
		out[i] = store.Emit{Type: t, ObjectType: "deal", ObjectID: obj.ID, Object: obj}
	}
	return out
}
