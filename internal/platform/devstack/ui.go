package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/revops/revops/internal/platform/temporalsetup"
)

// webUI is the Temporal Web UI served from the assets embedded in ui-server.
type webUI struct {
	srv  *uiserver.Server
	url  string
	done chan struct{} // closed when srv.Start returns
}

// startUI serves the UI on ep, pointed at the frontend, and returns once it
// answers its health check.
func startUI(ctx context.Context, ep endpoint, frontendAddr, namespace string, logger *slog.Logger) (*webUI, error) {
	host := ep.bindIP
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // ui-server joins host and port with a plain ":"
	}
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                ep.port,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		// Plain HTTP on loopback: a Secure cookie would never be sent back,
		// breaking the UI's CSRF token.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true, // no banner and no per-request access log
		// Offline-friendly: do not fetch Temporal news from the internet.
		DisableNewsFetch: true,
	}))
	u := &webUI{
		srv:  srv,
		url:  "http://" + ep.dialAddr(),
		done: make(chan struct{}),
	}
	// Start blocks until Stop. A listen failure inside it is fatal for the
	// process (echo's Logger.Fatal), which is why the port was probed first.
	go func() {
		defer close(u.done)
		if err := srv.Start(); err != nil {
			logger.Error("temporal ui stopped", "err", err)
		}
	}()
	if err := waitHTTP(ctx, u.url+"/healthz"); err != nil {
		u.stop()
		return nil, fmt.Errorf("start temporal ui on %s: %w", u.url, err)
	}
	return u, nil
}

func (u *webUI) stop() {
	// Close only closes listeners that exist; keep closing until Start has
	// returned so a Start that was still binding cannot leak a listener.
	for {
		u.srv.Stop()
		select {
		case <-u.done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitHTTP polls url until it answers 200.
func waitHTTP(ctx context.Context, rawURL string) error {
	hc := &http.Client{Timeout: time.Second}
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = "status " + strconv.Itoa(resp.StatusCode)
		} else {
			last = err.Error()
		}
		if err := temporalsetup.Sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("%w (last: %s)", err, last)
		}
	}
}
