package wire

import (
	"time"

	"github.com/revops/revops/models"
)

// Delivery limits (CONTRACT §8/§10).
const (
	DefaultRetryInterval = time.Hour
	MaxAttempts          = 6 // 1 attempt + 5 retries
	AttemptTimeout       = 30 * time.Second
)

// Codes of DeliveryInput.Code: the code path the starter asks a new run to take, chosen
// before the run exists instead of by workflow.GetVersion in it. The first GetVersion a
// run calls records a marker and upserts the TemporalChangeVersion search attribute: two
// more history events and a visibility write on the server (on PostgreSQL a row of a
// table with 73 indexes) for every delivery, on its success path (CONTRACT §22). The
// input is the first event of the run's history, so every replay of the run takes the
// path its first task took. Runs of the releases before CodeFanOut carry no code (0) and
// keep their GetVersion switch (changeFanOut, in workflows/delivery.go).
//
// Deploys: a worker of an earlier release that takes a run a new starter started ignores
// the field, asks changeFanOut and records fanOutOneMarker, the same code; a later
// worker replaying that run skips the marker and its upsert (the SDK does not match
// version markers against commands). The reverse is not covered (nor is it by
// GetVersion, whose earlier workers fail on a version they do not know): a worker rolled
// back to an earlier release that replays a run started with a code finds no marker
// and takes the single-endpoint path (DefaultVersion). With two deliveries or more its
// commands stop matching and its workflow tasks fail until a worker of this release
// takes them; with one it may end the run on that path (a failed delivery then marks its
// event failed, not its delivery row).
const (
	// CodeFanOut: fan out from the input's deliveries (fanOutOneMarker's code) without
	// asking changeFanOut. A later change of the whole run's code takes the next code.
	CodeFanOut = 1
)

// DeliveryInput starts the delivery of one event. It carries ids and names only: the
// body and the signing secrets are read by the activity, so they never enter history.
type DeliveryInput struct {
	EventID        string
	Type           string
	ObjectID       string
	Environment    string
	OrganizationID string
	Trigger        string // models.TriggerScheduled or models.TriggerManual
	// RetryInterval is the interval of the default retry policy (REVOPS_WEBHOOK_RETRY_
	// INTERVAL), fixed at start so that replays of the history stay deterministic; zero
	// means DefaultRetryInterval. The single-endpoint path retries at it; the fan-out
	// uses it for deliveries under the default policy (retryPolicyOf).
	RetryInterval time.Duration
	// Deliveries are the event's pending deliveries as the dispatcher read them when it
	// started the run (ids and policy copies only: never a URL or a secret). Empty: the
	// run asks the database (PendingDeliveries), as runs of earlier releases do.
	Deliveries []models.PendingDelivery `json:",omitempty"`
	// Code is the code path the starter asks for: CodeFanOut, or 0 in the inputs of
	// earlier releases (the run then asks changeFanOut).
	Code int `json:",omitempty"`
}
