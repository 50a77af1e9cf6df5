package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/revops/revops/internal/apiclient"
	"github.com/revops/revops/internal/demo"
)

// triggers lists, per event type, the API calls that emit it in sandbox.
var triggers = map[string]string{
	"account-created": "create an account",
	"account-updated": "create an account, then rename it",
	"account-deleted": "create an account, then deprovision it",
	"deal-created":    "create an account and a draft deal",
	"deal-updated":    "create a deal, then submit it",
	"deal-signed":     "create a deal, submit, approve and sign it",
	"deal-active":     "create a deal and take it all the way to active",
}

// runTrigger creates the objects and transitions needed to emit one event type.
func runTrigger(ctx context.Context, args []string) error {
	fs := newFlagSet("trigger")
	apiURL := fs.String("api", "", "Revops API base URL (default: the dev API)")
	apiKey := fs.String("api-key", os.Getenv("REVOPS_API_KEY"), "secret sandbox key (default: the one `revops dev` saved)")
	var typ string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		typ, args = args[0], args[1:]
	}
	cfg, err := loadConfig(fs, "dev", args)
	if err != nil {
		return err
	}
	if _, ok := triggers[typ]; !ok {
		var names []string
		for n, what := range triggers {
			names = append(names, fmt.Sprintf("  %-16s %s", n, what))
		}
		return fmt.Errorf("usage: revops trigger EVENT_TYPE\n%s", strings.Join(names, "\n"))
	}
	if *apiURL == "" {
		*apiURL = "http://" + cfg.HTTPAddr
	}
	if *apiKey == "" {
		if *apiKey, err = demo.SavedKey(cfg.DataDir, "secret", "sandbox"); err != nil {
			return err
		}
	}
	return trigger(ctx, apiclient.New(*apiURL, *apiKey), typ)
}

func trigger(ctx context.Context, api *apiclient.Client, typ string) error {
	step := func(method, path string, body any) (map[string]any, error) {
		var out map[string]any
		if err := api.Do(ctx, method, path, body, &out); err != nil {
			return nil, err
		}
		fmt.Printf("  %-6s %-52s → %v %v\n", method, path, out["object"], out["status"])
		return out, nil
	}
	suffix := time.Now().UTC().Format("150405")
	acct, err := step(http.MethodPost, "/v1/accounts", map[string]any{
		"name": "Trigger Co " + suffix, "external_id": "trigger-" + suffix, "billing_email": "billing@example.com",
	})
	if err != nil {
		return err
	}
	acctPath := fmt.Sprintf("/v1/accounts/%v", acct["id"])
	switch typ {
	case "account-created":
		return nil
	case "account-updated":
		_, err = step(http.MethodPatch, acctPath, map[string]any{"name": "Trigger Co (renamed) " + suffix})
		return err
	case "account-deleted":
		_, err = step(http.MethodDelete, acctPath, nil)
		return err
	}
	deal, err := step(http.MethodPost, "/v1/deals", map[string]any{
		"customer":  map[string]any{"id": acct["id"]},
		"net_price": "19999.00", "net_price_currency": "USD", "net_price_precision": "2",
		"original_net_price": "21999.00", "original_net_price_currency": "USD", "original_net_price_precision": "2",
		"opportunity_id": "opp-" + suffix, "contract_activates_date": time.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02"),
	})
	if err != nil {
		return err
	}
	dealPath := fmt.Sprintf("/v1/deals/%v", deal["id"])
	actions := map[string][]string{
		"deal-created": nil,
		"deal-updated": {"submit"},
		"deal-signed":  {"submit", "approve", "sign"},
		"deal-active":  {"submit", "approve", "sign", "activate"},
	}[typ]
	for _, a := range actions {
		if _, err := step(http.MethodPost, dealPath+"/"+a, nil); err != nil {
			return err
		}
	}
	return nil
}
