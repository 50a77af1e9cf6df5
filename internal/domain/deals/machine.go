// Package deals holds the rules of Deals (CONTRACT §7): the status machine, validation of
// the writable fields, the merge of a PATCH, and the object as the API and webhooks show it.
package deals

import (
	"fmt"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// Actions on a deal. Create and CreateSubmitted start from no status ("").
const (
	ActionCreate          = "create"
	ActionCreateSubmitted = "create_submitted" // POST /v1/deals with "submit": true
	ActionEdit            = "edit"             // PATCH
	ActionSubmit          = "submit"
	ActionApprove         = "approve"
	ActionSign            = "sign"
	ActionActivate        = "activate"
	ActionVoid            = "void"
)

// Deal event types.
const (
	EventCreated = "deal-created"
	EventUpdated = "deal-updated"
	EventSigned  = "deal-signed"
	EventActive  = "deal-active"
)

// Actions lists every action, for tests and the routes that expose them.
var Actions = []string{ActionCreate, ActionCreateSubmitted, ActionEdit, ActionSubmit, ActionApprove, ActionSign, ActionActivate, ActionVoid}

// Statuses lists every status, "" standing for "not created yet".
var Statuses = []string{"", models.DealDraft, models.DealPendingApproval, models.DealApproved, models.DealSigned, models.DealActive, models.DealVoid}

type move struct{ from, action string }

type outcome struct {
	to     string
	events []string
}

// machine is CONTRACT §7's table. deal-created leaves only "" and deal-signed only
// approved; no move leads back to either, so each is sent once per deal.
var machine = map[move]outcome{
	{"", ActionCreate}:                          {models.DealDraft, []string{EventCreated}},
	{"", ActionCreateSubmitted}:                 {models.DealPendingApproval, []string{EventCreated}},
	{models.DealDraft, ActionEdit}:              {models.DealDraft, []string{EventUpdated}},
	{models.DealPendingApproval, ActionEdit}:    {models.DealPendingApproval, []string{EventUpdated}},
	{models.DealDraft, ActionSubmit}:            {models.DealPendingApproval, []string{EventUpdated}},
	{models.DealPendingApproval, ActionApprove}: {models.DealApproved, []string{EventUpdated}},
	{models.DealApproved, ActionSign}:           {models.DealSigned, []string{EventUpdated, EventSigned}},
	{models.DealSigned, ActionActivate}:         {models.DealActive, []string{EventUpdated, EventActive}},
	{models.DealDraft, ActionVoid}:              {models.DealVoid, []string{EventUpdated}},
	{models.DealPendingApproval, ActionVoid}:    {models.DealVoid, []string{EventUpdated}},
	{models.DealApproved, ActionVoid}:           {models.DealVoid, []string{EventUpdated}},
}

// Transition returns the status a deal in status from reaches by action, and the deal
// events to send, in order. Any other move is a 409 naming the current status.
func Transition(from, action string) (string, []string, error) {
	if o, ok := machine[move{from, action}]; ok {
		return o.to, append([]string(nil), o.events...), nil
	}
	return from, nil, refuse(from, action)
}

func refuse(from, action string) error {
	verb := action
	if action == ActionCreate || action == ActionCreateSubmitted {
		verb = "create"
	}
	return fmt.Errorf("%w: %w", apperr.ErrInvalidTransition, apperr.Conflict("invalid_state_transition",
		"Cannot %s a deal whose status is %s.", verb, from))
}
