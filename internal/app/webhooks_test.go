package app

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/testdb"
)

// A webhook CA file (REVOPS_WEBHOOK_CA_FILE) that cannot be loaded stops the process at
// start, whatever parts it runs. The API and the dashboard used to log the fault and
// send their manual tests without the CA, so receivers behind it failed on TLS later.
func TestRunStopsWhenTheWebhookCACannotLoad(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for name, tc := range map[string]struct {
		caFile, want string
		parts        Parts
	}{
		"api, missing file":    {missing, "read webhook CA file", Parts{API: true}},
		"api, no certificate":  {notPEM, "holds no PEM certificate", Parts{API: true}},
		"worker, missing file": {missing, "read webhook CA file", Parts{Worker: true}},
		"both, no certificate": {notPEM, "holds no PEM certificate", Parts{API: true, Worker: true}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.Load(flag.NewFlagSet("test", flag.ContinueOnError), "serve", nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.WebhookCAFile, cfg.HTTPAddr, cfg.MetricsAddr = tc.caFile, "127.0.0.1:0", ""
			st := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
			temporal, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"}) // never dialled
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(temporal.Close)
			// Without the check Run would serve until this deadline and return nil.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ready := make(chan string, 1)
			tc.parts.Ready = ready
			err = Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), st, temporal, tc.parts)
			if err == nil || !strings.Contains(err.Error(), "webhook sender") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run returned %v, want a webhook sender error saying %q", err, tc.want)
			}
			select {
			case addr := <-ready:
				t.Errorf("the API listened on %s before stopping", addr)
			default:
			}
		})
	}
}
