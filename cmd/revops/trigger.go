package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/cli/demo"
	"github.com/revops/revops/internal/platform/config"
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
	// No default shown: flag prints it in the usage text, and $REVOPS_API_KEY is a secret.
	apiKey := fs.String("api-key", "", "secret sandbox key (default: $REVOPS_API_KEY, else the one that revops dev saved)")
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
		*apiKey = config.ClientEnv().APIKey
	}
	if *apiKey == "" {
		if *apiKey, err = demo.SavedKey(cfg.DataDir, "secret", "sandbox"); err != nil {
			return err
		}
	}
	api, err := cliapi.New(*apiURL, *apiKey)
	if err != nil {
		return err
	}
	return cliapi.Err(trigger(ctx, api, typ, os.Stdout))
}

// trigger makes the calls that emit typ, printing one line per call to out. Each call is
// retried on network errors, 429 and 5xx with one idempotency key, so it changes once.
func trigger(ctx context.Context, api *revops.Client, typ string, out io.Writer) error {
	show := func(method, path, object string, status any) {
		fmt.Fprintf(out, "  %-6s %-52s → %v %v\n", method, path, object, status)
	}
	suffix := time.Now().UTC().Format("150405")
	acct, err := api.CreateAccount(ctx, &revops.AccountCreate{
		Name: "Trigger Co " + suffix, ExternalID: revops.Value("trigger-" + suffix), BillingEmail: revops.Value("billing@example.com"),
	})
	if err != nil {
		return err
	}
	show(http.MethodPost, "/v1/accounts", acct.Object, acct.Status)
	acctPath := "/v1/accounts/" + acct.ID
	switch typ {
	case "account-created":
		return nil
	case "account-updated":
		a, err := api.UpdateAccount(ctx, acct.ID, &revops.AccountUpdate{Name: revops.String("Trigger Co (renamed) " + suffix)})
		if err != nil {
			return err
		}
		show(http.MethodPatch, acctPath, a.Object, a.Status)
		return nil
	case "account-deleted":
		a, err := api.DeprovisionAccount(ctx, acct.ID)
		if err != nil {
			return err
		}
		show(http.MethodDelete, acctPath, a.Object, a.Status)
		return nil
	}
	deal, err := api.CreateDeal(ctx, &revops.DealCreate{
		Customer: revops.DealCustomerRef{ID: acct.ID},
		NetPrice: revops.Value("19999.00"), NetPriceCurrency: revops.Value("USD"), NetPricePrecision: revops.Value(revops.Precision2),
		OriginalNetPrice: revops.Value("21999.00"), OriginalNetPriceCurrency: revops.Value("USD"), OriginalNetPricePrecision: revops.Value(revops.Precision2),
		OpportunityID: revops.Value("opp-" + suffix), ContractActivatesDate: revops.Value(time.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02")),
	})
	if err != nil {
		return err
	}
	show(http.MethodPost, "/v1/deals", deal.Object, deal.Status)
	steps := []struct {
		name string
		call func(context.Context, string, ...revops.RequestOption) (*revops.Deal, error)
	}{{"submit", api.SubmitDeal}, {"approve", api.ApproveDeal}, {"sign", api.SignDeal}, {"activate", api.ActivateDeal}}
	n := map[string]int{"deal-created": 0, "deal-updated": 1, "deal-signed": 3, "deal-active": 4}[typ]
	for _, st := range steps[:n] {
		d, err := st.call(ctx, deal.ID)
		if err != nil {
			return err
		}
		show(http.MethodPost, "/v1/deals/"+deal.ID+"/"+st.name, d.Object, d.Status)
	}
	return nil
}
