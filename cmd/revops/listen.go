package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/revops/revops/internal/apiclient"
	"github.com/revops/revops/internal/demo"
	"github.com/revops/revops/internal/listener"
	"github.com/revops/revops/internal/localca"
)

// runListen serves a local HTTPS receiver, points the sandbox webhook endpoint at it and
// prints every delivery as it arrives.
func runListen(ctx context.Context, args []string) error {
	fs := newFlagSet("listen")
	addr := fs.String("addr", "127.0.0.1:4443", "where the receiver listens")
	apiURL := fs.String("api", "", "Revops API base URL (default: the dev API)")
	apiKey := fs.String("api-key", os.Getenv("REVOPS_API_KEY"), "secret sandbox key (default: the one `revops dev` saved)")
	method := fs.String("method", "POST", "delivery method to configure: POST or GET")
	fail := fs.Bool("fail", false, "refuse every delivery (answer 500) to watch retries")
	forwardTo := fs.String("forward-to", "", "relay each delivery to this URL and answer with its response")
	cfg, err := loadConfig(fs, "dev", args)
	if err != nil {
		return err
	}
	if *apiURL == "" {
		*apiURL = "http://" + cfg.HTTPAddr
	}
	if *apiKey == "" {
		if *apiKey, err = demo.SavedKey(cfg.DataDir, "secret", "sandbox"); err != nil {
			return err
		}
	}
	ca, err := localca.Ensure(cfg.DataDir)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", *addr, err)
	}
	cert, err := ca.Issue(host, "localhost", "127.0.0.1")
	if err != nil {
		return err
	}
	ln, err := tls.Listen("tcp", *addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	url := fmt.Sprintf("https://%s/webhooks", ln.Addr().String())

	api := apiclient.New(*apiURL, *apiKey)
	secrets, err := pointEndpoint(ctx, api, url, *method)
	if err != nil {
		ln.Close()
		return err
	}
	h := &listener.Handler{
		Secrets: secrets.get, Ack: cfg.AckSentence(), Fail: *fail, ForwardTo: *forwardTo,
		Client: &http.Client{Timeout: 25 * time.Second}, Out: os.Stdout,
	}
	fmt.Printf("Listening on %s — the sandbox webhook endpoint now points here (%s).\n", url, *method)
	if *fail {
		fmt.Println("--fail: every delivery is refused with 500, so you can watch the retries.")
	}
	fmt.Println("Try: revops trigger deal-signed   (Ctrl-C stops)")
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// secretSet holds the signing secrets the receiver accepts.
type secretSet struct {
	mu   sync.Mutex
	list []string
}

func (s *secretSet) get() []string { s.mu.Lock(); defer s.mu.Unlock(); return s.list }

// pointEndpoint sets the environment's webhook endpoint to url and returns its secret.
func pointEndpoint(ctx context.Context, api *apiclient.Client, url, method string) (*secretSet, error) {
	var ep struct {
		Secret string `json:"secret"`
	}
	if err := api.Do(ctx, http.MethodPut, "/v1/webhook_endpoint", map[string]any{"url": url, "method": method, "enabled": true}, &ep); err != nil {
		return nil, fmt.Errorf("configure the webhook endpoint: %w", err)
	}
	if ep.Secret == "" {
		if err := api.Do(ctx, http.MethodGet, "/v1/webhook_endpoint/secret", nil, &ep); err != nil {
			return nil, fmt.Errorf("read the signing secret: %w", err)
		}
	}
	return &secretSet{list: []string{ep.Secret}}, nil
}
