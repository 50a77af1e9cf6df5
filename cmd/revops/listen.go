package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/cli/demo"
	"github.com/revops/revops/internal/cli/listener"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/localca"
	"github.com/revops/revops/internal/platform/signing"
)

// runListen serves a local HTTPS receiver, creates its own temporary sandbox endpoint
// pointing at it (like `stripe listen`; the configured endpoints are left alone), prints
// every delivery as it arrives, and deletes that endpoint when it stops.
func runListen(ctx context.Context, args []string) error {
	fs := newFlagSet("listen")
	addr := fs.String("addr", "127.0.0.1:4443", "where the receiver listens")
	apiURL := fs.String("api", "", "Revops API base URL (default: the dev API)")
	// No default shown: flag prints it in the usage text, and $REVOPS_API_KEY is a secret.
	apiKey := fs.String("api-key", "", "secret sandbox key (default: $REVOPS_API_KEY, else the one that revops dev saved)")
	method := fs.String("method", "POST", "delivery method of the temporary endpoint: POST or GET")
	events := fs.String("events", "", "comma-separated event types to receive, e.g. deal-signed,account-created, or operational ones such as endpoint-disabled, which * never includes (default: *; GET /v1/event_types lists them)")
	verify := fs.String("verify-secret", "", "also accept signatures of this secret (an endpoint of yours pointed at this receiver)")
	publicKey := fs.String("public-key", "", "also accept v1a signatures of this whpk_ public key (an ed25519 endpoint of yours pointed at this receiver)")
	signingScheme := fs.String("signing", "", "signing scheme of the temporary endpoint: hmac-sha256 (the default) or ed25519, verified with the public key it shows")
	fail := fs.Bool("fail", false, "refuse every delivery (answer 500) to watch retries")
	forwardTo := fs.String("forward-to", "", "relay each delivery to this URL and answer with its response")
	cfg, err := loadConfig(fs, "dev", args)
	if err != nil {
		return err
	}
	for _, k := range strings.Fields(strings.ReplaceAll(*publicKey, ",", " ")) {
		if _, err := signing.ParsePublicKey(k); err != nil {
			return fmt.Errorf("--public-key: %w", err)
		}
	}
	api, err := listenClient(cfg, *apiURL, *apiKey)
	if err != nil {
		return err
	}
	ln, err := listenTLS(cfg.DataDir, *addr)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("https://%s/webhooks", ln.Addr().String())

	ep, removed, err := listener.Open(ctx, api, listener.CurrentOwner(), url, *method, *signingScheme, listener.ParseEvents(*events))
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		// ctx is cancelled by now (SIGINT/SIGTERM): the deletion gets its own time.
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := listener.Close(closeCtx, api, ep.ID); err != nil {
			fmt.Fprintf(os.Stderr, "could not delete the temporary endpoint %s (the next listen removes it): %v\n", ep.ID, err)
			return
		}
		fmt.Printf("Deleted the temporary endpoint %s.\n", ep.ID)
	}()
	for _, id := range removed {
		fmt.Printf("Removed the temporary endpoint %s that a stopped listen left behind.\n", id)
	}
	secrets := append([]string{ep.Key()}, strings.Fields(strings.ReplaceAll(*verify+" "+*publicKey, ",", " "))...)
	h := &listener.Handler{
		Secrets: func() []string { return secrets }, Ack: cfg.AckSentence(), Fail: *fail, ForwardTo: *forwardTo,
		Client: &http.Client{Timeout: 25 * time.Second}, Out: os.Stdout,
	}
	announce(url, ep, *method, *fail)
	return serveUntilDone(ctx, h, ln)
}

// listenClient is the API client of listen: the API named, or the dev API; the key given,
// or $REVOPS_API_KEY, or the sandbox secret key that revops dev saved.
func listenClient(cfg config.Config, apiURL, apiKey string) (*revops.Client, error) {
	if apiURL == "" {
		apiURL = "http://" + cfg.HTTPAddr
	}
	if apiKey == "" {
		apiKey = config.ClientEnv().APIKey
	}
	if apiKey == "" {
		var err error
		if apiKey, err = demo.SavedKey(cfg.DataDir, "secret", "sandbox"); err != nil {
			return nil, err
		}
	}
	return cliapi.New(apiURL, apiKey)
}

// announce says where listen receives, through which endpoint, and how to try it.
func announce(url string, ep listener.Endpoint, method string, fail bool) {
	fmt.Printf("Listening on %s — temporary sandbox endpoint %s (%s, %s) created; it is deleted when listen stops.\n",
		url, ep.ID, method, strings.Join(ep.EventTypes, ","))
	if ep.PublicKey != "" {
		fmt.Printf("It signs with ed25519 (v1a): deliveries are verified with its public key %s.\n", ep.PublicKey)
	}
	if fail {
		fmt.Println("--fail: every delivery is refused with 500, so you can watch the retries.")
	}
	fmt.Println("Try: revops trigger deal-signed   (Ctrl-C stops)")
}

// serveUntilDone serves h on ln until ctx ends, then shuts the server down.
func serveUntilDone(ctx context.Context, h http.Handler, ln net.Listener) error {
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

// listenTLS listens on addr with a certificate of the local CA that `revops dev` trusts.
func listenTLS(dataDir, addr string) (net.Listener, error) {
	ca, err := localca.Ensure(dataDir)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	cert, err := ca.Issue(host, "localhost", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}
