package listener

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/revops/revops/internal/apiclient"
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
	Secret      string   `json:"secret"`
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
// this listen's own endpoint to receiverURL for eventTypes (nil: every type, "*"). The
// configured endpoints are never touched. removed lists the ids it deleted.
func Open(ctx context.Context, api *apiclient.Client, o Owner, receiverURL, method string, eventTypes []string) (ep Endpoint, removed []string, err error) {
	removed, err = RemoveLeftovers(ctx, api, o)
	if err != nil {
		return ep, removed, err
	}
	if len(eventTypes) == 0 {
		eventTypes = []string{"*"}
	}
	body := map[string]any{"url": receiverURL, "method": method, "description": o.description(),
		"event_types": eventTypes, "enabled": true}
	if err := api.Do(ctx, http.MethodPost, "/v1/webhook_endpoints", body, &ep); err != nil {
		return ep, removed, fmt.Errorf("create the temporary webhook endpoint: %w", err)
	}
	return ep, removed, nil
}

// RemoveLeftovers deletes this host's listen endpoints whose process is gone.
func RemoveLeftovers(ctx context.Context, api *apiclient.Client, o Owner) ([]string, error) {
	var removed []string
	after := ""
	for {
		var page struct {
			Data    []Endpoint `json:"data"`
			HasMore bool       `json:"has_more"`
		}
		q := url.Values{"limit": {"100"}}
		if after != "" {
			q.Set("starting_after", after)
		}
		if err := api.Do(ctx, http.MethodGet, "/v1/webhook_endpoints?"+q.Encode(), nil, &page); err != nil {
			return removed, fmt.Errorf("list webhook endpoints: %w", err)
		}
		for _, ep := range page.Data {
			if !o.leftOver(ep.Description) {
				continue
			}
			if err := Close(ctx, api, ep.ID); err != nil {
				return removed, fmt.Errorf("remove the endpoint a stopped listen left: %w", err)
			}
			removed = append(removed, ep.ID)
		}
		if !page.HasMore || len(page.Data) == 0 {
			return removed, nil
		}
		after = page.Data[len(page.Data)-1].ID
	}
}

// Close deletes a listen's endpoint; one already gone is fine.
func Close(ctx context.Context, api *apiclient.Client, id string) error {
	err := api.Do(ctx, http.MethodDelete, "/v1/webhook_endpoints/"+url.PathEscape(id), nil, nil)
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	return nil
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

// IsLeftOver tells whether ep is the endpoint of a listen of o's host that no longer runs.
func IsLeftOver(o Owner, ep Endpoint) bool { return o.leftOver(ep.Description) }
