package revops

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestListIteratorWalksEveryPage(t *testing.T) {
	rec, c := newRecorder(t,
		status(200, `{"object":"list","data":[`+dealJSON("d3")+`,`+dealJSON("d2")+`],"has_more":true}`),
		status(200, `{"object":"list","data":[`+dealJSON("d1")+`],"has_more":false}`),
	)
	var ids []string
	for d, err := range c.ListDealsAll(context.Background(), &ListDealsParams{Limit: 2, Status: DealStatusDraft}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if len(ids) != 3 || ids[2] != "d1" {
		t.Fatalf("walked %v", ids)
	}
	reqs := rec.requests()
	if reqs[0].URL.RawQuery != "limit=2&status=draft" || reqs[1].URL.RawQuery != "limit=2&starting_after=d2&status=draft" {
		t.Fatalf("queries %q, %q", reqs[0].URL.RawQuery, reqs[1].URL.RawQuery)
	}
}

func TestListIteratorStopsAtTheFirstError(t *testing.T) {
	_, c := newRecorder(t,
		status(200, `{"object":"list","data":[`+dealJSON("d2")+`],"has_more":true}`),
		apiError(404, "resource_missing"),
	)
	n := 0
	var last error
	for d, err := range c.ListDealsAll(context.Background(), nil) {
		n++
		if err != nil && d != nil {
			t.Fatal("an error came with an item")
		}
		last = err
	}
	var apiErr *Error
	if n != 2 || !errors.As(last, &apiErr) {
		t.Fatalf("%d yields, last %v", n, last)
	}
}

func TestMeterValuesIteratorFollowsNextPage(t *testing.T) {
	row := `{"window_start":"2026-11-01T00:00:00Z","window_end":"2026-11-02T00:00:00Z","account_id":"acct","group":{"region":null},"value":2.5}`
	rec, c := newRecorder(t,
		status(200, `{"object":"meter_values","meter":"m","window":"day","as_of":"2026-11-24T00:00:00Z","data":[`+row+`,`+row+`],"has_more":true,"next_page":"cursor-2"}`),
		status(200, `{"object":"meter_values","meter":"m","window":"day","as_of":"2026-11-24T00:00:00Z","data":[`+row+`],"has_more":false,"next_page":null}`),
	)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	params := &MeterValuesParams{From: from, To: from.AddDate(0, 1, 0), Window: ResolutionDay, Filter: map[string]string{"region": "eu"}}
	n := 0
	for v, err := range c.MeterValuesAll(context.Background(), "m", params) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Value != 2.5 || v.Group["region"] != nil {
			t.Fatalf("row %+v", v)
		}
		n++
	}
	reqs := rec.requests()
	if n != 3 || reqs[1].URL.Query().Get("page") != "cursor-2" || reqs[0].URL.Query().Get("filter[region]") != "eu" ||
		reqs[0].URL.Query().Get("from") != "2026-11-01T00:00:00Z" {
		t.Fatalf("%d rows, queries %q, %q", n, reqs[0].URL.RawQuery, reqs[1].URL.RawQuery)
	}
	if params.Page != "" {
		t.Fatal("the iterator changed the caller's params")
	}
}

func TestBreakingOutOfALoopFetchesNoMore(t *testing.T) {
	rec, c := newRecorder(t, status(200, `{"object":"list","data":[`+dealJSON("d2")+`,`+dealJSON("d1")+`],"has_more":true}`))
	for range c.ListDealsAll(context.Background(), nil) {
		break
	}
	if len(rec.requests()) != 1 {
		t.Fatalf("%d requests", len(rec.requests()))
	}
}

func dealJSON(id string) string {
	return `{"id":"` + id + `","object":"deal","status":"draft","customer":{"id":"a","name":"A","external_id":null,"billing_email":null},` +
		`"contract_activates_date":null,"net_price":null,"net_price_currency":null,"net_price_precision":null,` +
		`"original_net_price":null,"original_net_price_currency":null,"original_net_price_precision":null,` +
		`"opportunity_id":null,"signed_contract_url":null,"skus":[],"terms":[],"created_at":"2026-11-24T10:00:00Z","updated_at":"2026-11-24T10:00:00Z"}`
}
