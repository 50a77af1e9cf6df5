package listener

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
)

// Marker begins the description of every endpoint `revops listen` creates, so that a
// later listen can find the ones a killed listen left behind. The rest of the
// description is "<pid>@<host>" of the listen that owns it.
const Marker = "revops listen (temporary)"

// Endpoint is the temporary sandbox endpoint of one listen (CONTRACT §13).
type Endpoint struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	EventTypes  []string `json:"event_types"`
	Secret      string   `json:"secret"`     // hmac-sha256: shown only by the create
	PublicKey   string   `json:"public_key"` // ed25519 (CONTRACT §25)
}

// Key is what verifies the endpoint's deliveries: its secret, or its public key.
func (e Endpoint) Key() string {
	if e.PublicKey != "" {
		return e.PublicKey
	}
	return e.Secret
}

// Owner identifies a listen process: its pid and host, and how to tell whether another
// pid of this host still runs.
type Owner struct {
	PID   int
	Host  string
	Alive func(pid int) bool // nil: signal 0 to the pid
}

// CurrentOwner is this process.
func CurrentOwner() Owner {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return Owner{PID: os.Getpid(), Host: host}
}

func (o Owner) description() string { return fmt.Sprintf("%s %d@%s", Marker, o.PID, o.Host) }

func (o Owner) alive(pid int) bool {
	if o.Alive != nil {
		return o.Alive(pid)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM) // EPERM: it runs, as another user
}

// leftOver tells whether description names a listen of this host that no longer runs
// (or this very pid, reused): its endpoint is a leftover. A listen of another host is
// never judged from here, so two machines sharing a sandbox do not delete each other's.
func (o Owner) leftOver(description string) bool {
	rest, ok := strings.CutPrefix(description, Marker+" ")
	if !ok {
		return false
	}
	pidText, host, ok := strings.Cut(rest, "@")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || host != o.Host {
		return false
	}
	return pid == o.PID || !o.alive(pid)
}

// Open removes the endpoints that killed listens of this host left behind, then creates
// this listen's own endpoint to receiverURL for eventTypes (nil: every type, "*"), signed
// with scheme signing ("": the API's default, hmac-sha256). The configured endpoints are
// never touched. removed lists the ids it deleted.
func Open(ctx context.Context, api *revops.Client, o Owner, receiverURL, method, signing string, eventTypes []string) (ep Endpoint, removed []string, err error) {
	removed, err = RemoveLeftovers(ctx, api, o)
	if err != nil {
		return ep, removed, err
	}
	if len(eventTypes) == 0 {
		eventTypes = []string{"*"}
	}
	types := make([]revops.EndpointEventType, len(eventTypes))
	for i, t := range eventTypes {
		types[i] = revops.EndpointEventType(t)
	}
	create := &revops.EndpointCreate{
		URL: receiverURL, Method: revops.Ptr(revops.WebhookMethod(method)), Description: revops.Value(o.description()),
		EventTypes: types, Enabled: revops.Bool(true),
	}
	if signing != "" {
		create.Signing = revops.Ptr(revops.EndpointSigning(signing)) // the API judges the name
	}
	created, err := api.CreateWebhookEndpoint(ctx, create)
	if err != nil {
		return ep, removed, fmt.Errorf("create the temporary webhook endpoint: %w", cliapi.Err(err))
	}
	return endpointOf(created), removed, nil
}

// RemoveLeftovers deletes this host's listen endpoints whose process is gone.
func RemoveLeftovers(ctx context.Context, api *revops.Client, o Owner) ([]string, error) {
	var removed []string
	for ep, err := range api.ListWebhookEndpointsAll(ctx, &revops.ListWebhookEndpointsParams{Limit: 100}) {
		if err != nil {
			return removed, fmt.Errorf("list webhook endpoints: %w", cliapi.Err(err))
		}
		if !o.leftOver(cliapi.Value(ep.Description)) {
			continue
		}
		if err := Close(ctx, api, ep.ID); err != nil {
			return removed, fmt.Errorf("remove the endpoint a stopped listen left: %w", err)
		}
		removed = append(removed, ep.ID)
	}
	return removed, nil
}

// Close deletes a listen's endpoint; one already gone is fine.
func Close(ctx context.Context, api *revops.Client, id string) error {
	_, err := api.DeleteWebhookEndpoint(ctx, id)
	var apiErr *revops.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, cliapi.Err(err))
	}
	return nil
}

// endpointOf is what a listen keeps of an endpoint of the API.
func endpointOf(e *revops.Endpoint) Endpoint {
	ep := Endpoint{ID: e.ID, URL: e.URL, Description: cliapi.Value(e.Description), Secret: e.Secret}
	if e.PublicKey != nil {
		ep.PublicKey = *e.PublicKey
	}
	for _, t := range e.EventTypes {
		ep.EventTypes = append(ep.EventTypes, string(t))
	}
	return ep
}

// ParseEvents splits --events ("deal-signed,account-created"); "" is every type. The API
// judges the names (invalid_event_type names the bad one).
func ParseEvents(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
