package prodlike_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/testkit/prodlike"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/workflows/wire"
)

// An endpoint that signs with ed25519 and sends a custom header, created, used, rotated
// and used again through the api and worker processes (CONTRACT §25): the receiver sees
// the header on every attempt and verifies v1a with crypto/ed25519 alone, with both keys
// during the rotation's overlap; then neither the private keys (nor their seeds) nor the
// header value is in any span, process log, Temporal history or database row in clear.
func TestSecretsStayInTheDatabaseSealed(t *testing.T) {
	prodlike.Require(t)
	sink := prodlike.StartOTLPSink(t)
	receiver := webhooktest.NewReceiver(t)
	s, c, apis, workers := startShape(t, receiver, sink.Env()...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	const headerValue = "hv-7f3a9c2e-not-for-logs"
	ep, err := c.change(ctx, "POST", "/v1/webhook_endpoints", map[string]any{"url": receiver.URL + "/sealed",
		"event_types": []string{"account-created"}, "signing": "ed25519",
		"headers": map[string]string{"X-Api-Key": headerValue}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := ep["id"].(string)
	firstKey, _ := ep["public_key"].(string)
	if _, shown := ep["secret"]; shown || !strings.HasPrefix(firstKey, "whpk_") {
		t.Fatalf("create answered %v: want a public_key and no secret", ep)
	}

	// delivered waits for the account's delivery and checks its header and signatures:
	// each public key in keys must verify one v1a signature.
	delivered := func(name string, keys ...string) {
		t.Helper()
		if _, err := c.change(ctx, "POST", "/v1/accounts", map[string]any{"name": name}); err != nil {
			t.Fatal(err)
		}
		var got webhooktest.Received
		waitFor(t, 2*time.Minute, "the delivery of "+name, func() bool {
			for _, r := range receiver.Received() {
				if r.Path == "/sealed" && strings.Contains(string(r.Body), name) {
					got = r
					return true
				}
			}
			return false
		})
		if v := got.Header.Get("X-Api-Key"); v != headerValue {
			t.Errorf("%s came with X-Api-Key %q, want the endpoint's", name, v)
		}
		signed := got.Header.Get("webhook-id") + "." + got.Header.Get("webhook-timestamp") + "." + string(got.Body)
		sigs := strings.Fields(got.Header.Get("webhook-signature"))
		if len(sigs) != len(keys) {
			t.Errorf("%s came with signatures %q, want %d", name, sigs, len(keys))
		}
		for _, k := range keys {
			pub, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(k, "whpk_"))
			if err != nil || len(pub) != ed25519.PublicKeySize {
				t.Fatalf("public key %q: %v", k, err)
			}
			ok := false
			for _, sig := range sigs {
				raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "v1a,"))
				ok = ok || strings.HasPrefix(sig, "v1a,") && err == nil && ed25519.Verify(pub, []byte(signed), raw)
			}
			if !ok {
				t.Errorf("%s: no v1a signature verifies with %s", name, k)
			}
		}
	}
	delivered("Sealed One", firstKey)
	rotated, err := c.change(ctx, "POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	secondKey, _ := rotated["public_key"].(string)
	if !strings.HasPrefix(secondKey, "whpk_") || secondKey == firstKey {
		t.Fatalf("rotate_secret answered %v: want a new public_key", rotated)
	}
	delivered("Sealed Two", secondKey, firstKey)

	// Reads show the header redacted.
	var read map[string]any
	if err := c.get(ctx, "/v1/webhook_endpoints/"+id, &read); err != nil {
		t.Fatal(err)
	}
	if h, _ := read["headers"].(map[string]any); h["X-Api-Key"] != "<redacted>" {
		t.Errorf("GET shows headers %v, want X-Api-Key <redacted>", read["headers"])
	}

	// What must be found nowhere: the private keys, by their prefix (whsk_) and their
	// seeds' base64 as the database holds them (read with the test's own key), and the
	// header value.
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	needles := []string{"whsk_", headerValue}
	var current, previous string
	if err := conn.QueryRow(ctx, `SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1`, id).Scan(&current, &previous); err != nil {
		t.Fatal(err)
	}
	for col, sealed := range map[string]string{"secret": current, "previous_secret": previous} {
		// The processes' key (prodlike.Start); a fresh database: bound to the row (§25).
		k, err := testdb.Keyring().Open(sealed, secretbox.Place{Table: "webhook_endpoints", Column: col, Row: id})
		if err != nil || !strings.HasPrefix(k, "whsk_") {
			t.Fatalf("endpoint %s holds a key that is not a sealed whsk_ one (%v)", id, err)
		}
		needles = append(needles, strings.TrimPrefix(k, "whsk_"))
	}
	find := func(where, text string) {
		t.Helper()
		for i, n := range needles {
			if strings.Contains(text, n) {
				t.Errorf("%s holds secret #%d (of: whsk_, the header value, the seeds)", where, i)
			}
		}
	}

	for _, p := range append(append([]*prodlike.Proc{}, workers...), apis[0].Proc, apis[1].Proc) {
		b, err := os.ReadFile(p.Log)
		if err != nil {
			t.Fatal(err)
		}
		find("the log of "+p.Name, string(b))
	}
	spans, err := sink.Spans()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, sp := range spans {
		text.WriteString(sp.Name)
		for k, v := range sp.Attributes {
			text.WriteString(" " + k + "=" + v)
		}
		text.WriteString("\n")
	}
	find("a span", text.String())
	if len(spans) == 0 {
		t.Error("no span reached the sink: the search of spans searched nothing")
	}

	tc, err := client.Dial(client.Options{HostPort: s.Temporal.Address, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	// Visibility lists a run a moment after it started: wait (a minute at most) until both
	// deliveries' runs are listed, then search every run listed.
	var runs []*workflowpb.WorkflowExecutionInfo
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		runs = resp.GetExecutions()
		deliveries := 0
		for _, r := range runs {
			if r.GetType().GetName() == wire.WorkflowName {
				deliveries++
			}
		}
		if deliveries >= 2 || time.Now().After(deadline) {
			break
		}
	}
	histories := 0
	for _, r := range runs {
		it := tc.GetWorkflowHistory(ctx, r.GetExecution().GetWorkflowId(), r.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			// Text format: payloads' bytes as (escaped) text, not base64 as in JSON.
			find("the history of "+r.GetExecution().GetWorkflowId(), prototext.Format(e))
		}
		histories++
	}
	if histories < 2 {
		t.Errorf("%d histories searched, want at least the two deliveries'", histories)
	}

	// Every row of every table, cast to text.
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	pattern := make([]string, len(needles))
	for i, n := range needles {
		pattern[i] = regexp.QuoteMeta(n)
	}
	for _, table := range tables {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` t WHERE t::text ~ $1`, strings.Join(pattern, "|")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows of %s hold a private key, a seed or the header value in clear", n, table)
		}
	}
	if len(tables) < 10 {
		t.Errorf("%d tables searched", len(tables))
	}
}
