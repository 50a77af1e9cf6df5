// Package config reads Revops settings from flags and REVOPS_* environment variables
// (CONTRACT §12). A flag given on the command line wins over its variable.
package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/secretbox"
)

// Config is every setting of the service. Commands use the parts they need.
type Config struct {
	Mode string // dev, serve, api, worker, migrate or cli

	DatabaseURL string
	DataDir     string
	HTTPAddr    string
	PublicURL   string

	TemporalAddress   string
	TemporalNamespace string
	TemporalUIAddr    string
	TemporalUIURL     string
	TemporalVerbose   bool
	TemporalTraces    bool // dev: the embedded Temporal server keeps the OTEL_* variables
	// TemporalCompression is the gRPC compression between Revops and Temporal: "none"
	// (the default: where they share a network, gzip costs CPU on both sides and saves
	// nothing a delivery's small messages would notice, CONTRACT §22) or "gzip" (the
	// SDK's own default, for a Temporal across a slow link).
	TemporalCompression string

	ServiceName string

	TLS     string // "" or "proxy"
	TLSCert string
	TLSKey  string

	WebhookRetryInterval time.Duration
	// WebhookDisableAfter disables an endpoint whose attempts have all failed for this
	// long (CONTRACT §13); 0 never does.
	WebhookDisableAfter time.Duration
	// WebhookFailingAfter: an endpoint whose attempts have all failed for this long is
	// failing and announced so (CONTRACT §23).
	WebhookFailingAfter time.Duration
	// WebhookOrderMaxWait: a delivery that has waited this long behind its order lane
	// ends failed, order_wait_expired (CONTRACT §26).
	WebhookOrderMaxWait time.Duration
	WebhookCAFile       string
	WebhookAllowPrivate bool

	// TrustedProxies are the proxies whose X-Forwarded-For names the client (throttles,
	// logs); a request from anywhere else is its own client (CONTRACT §12).
	TrustedProxies Prefixes

	MetricsAddr string
	RateLimit   float64 // requests per second per key; burst is twice that; 0 disables
	// EnvRateLimit is requests per second per environment across all its keys, in each
	// replica (CONTRACT §17); burst is twice that; 0 disables.
	EnvRateLimit float64
	LogLevel     string

	// Retention is how long events, deliveries and attempts are kept (CONTRACT §16).
	Retention time.Duration
	// ReplayRate is how many deliveries per second a bulk replay starts at most (§16).
	ReplayRate float64
	// WorkerActivitySlots is how many delivery attempts a worker process runs at once
	// (CONTRACT §17): the activity slots of its revops-webhooks worker.
	WorkerActivitySlots int

	// Bounds of tenant work (CONTRACT §21).
	// DBConnections serves requests and delivery records; DBJobConnections serves tenant
	// jobs (backfills, purges, bulk replays, the meter consumer), so jobs never take the
	// connections deliveries need. SQLite keeps one connection whatever they say.
	DBConnections    int
	DBJobConnections int
	// DBLockTimeout is the longest a request waits on a lock (429 lock_timeout after it);
	// DBStatementTimeout the longest statement of a request. Migrate and retention are exempt.
	DBLockTimeout      time.Duration
	DBStatementTimeout time.Duration
	// MeterQueries is how many values queries of one environment run at once in this
	// replica; MeterConsumers how many meter consumers a worker process runs.
	MeterQueries   int
	MeterConsumers int
	// FilterTests is how many webhook filter tests of one environment run at once in this
	// replica (API and dashboard together).
	FilterTests int
	// PacedRatePerEnvironment caps the rates of an environment's paced endpoints added
	// up, per second; PacedEndpoints the paced endpoints of the whole deployment, the
	// number the shipped Temporal dynamic config is sized for (CONTRACT §27).
	PacedRatePerEnvironment float64
	PacedEndpoints          int
	// AlertEventsPerHour caps an environment's meter-threshold-crossed events per clock
	// hour (CONTRACT §24): firings past it are recorded, and counted in the next event.
	AlertEventsPerHour int

	// Keyring is REVOPS_ENCRYPTION_KEYS parsed: the keys that seal the secrets kept in
	// the database (CONTRACT §25); nil when unset. A variable only, never a flag (a flag
	// shows in the process list), and the raw keys are not kept: printing a Config shows
	// a pointer, never a key.
	Keyring *secretbox.Keyring
	// SealBound is REVOPS_SEAL_BOUND: whether secrets are written bound to their row (the
	// form the release before cannot read) or unbound; auto, the default (on in dev),
	// binds them when the database keeps none unbound (store.Options.SealBound).
	SealBound Switch

	// Pprof adds Go's profiler (/debug/pprof/) to the metrics listener when PprofEnv is
	// "1": how the delivery benchmark on the production shape profiles the api and worker
	// processes (docs/benchmarks.md). Not a setting (no flag, not in EnvVars): off unless
	// set, since profiles show code paths and cost CPU.
	Pprof bool
}

// PprofEnv is the variable that turns Pprof on.
const PprofEnv = "REVOPS_PPROF"

// EncryptionKeysEnv is REVOPS_ENCRYPTION_KEYS: comma-separated base64 keys of 32 bytes,
// the first seals, all open (CONTRACT §25).
const EncryptionKeysEnv = "REVOPS_ENCRYPTION_KEYS"

// SealBoundEnv is REVOPS_SEAL_BOUND (Config.SealBound).
const SealBoundEnv = "REVOPS_SEAL_BOUND"

// Defaults of the §21 bounds, chosen by measurement (docs/benchmarks.md).
const (
	DefaultDBConnections    = 16
	DefaultDBJobConnections = 8
	DefaultMeterQueries     = 4
	DefaultMeterConsumers   = 2
	DefaultFilterTests      = 4
	// DefaultPacedRatePerEnvironment and DefaultPacedEndpoints are CONTRACT §27's
	// defaults (webhook.DefaultPacedRatePerEnvironment, webhook.DefaultPacedEndpoints).
	DefaultPacedRatePerEnvironment = 100
	DefaultPacedEndpoints          = 2000
	// DefaultAlertEventsPerHour is CONTRACT §24's REVOPS_ALERT_EVENTS_PER_HOUR.
	DefaultAlertEventsPerHour = 1000
)

// DefaultWorkerActivitySlots is REVOPS_WORKER_ACTIVITY_SLOTS' default, chosen by
// measurement (docs/benchmarks.md, "Worker activity slots").
const DefaultWorkerActivitySlots = 2000

// MinRetention is the shortest REVOPS_RETENTION: the longest retry schedule (§13), so no
// delivery still being retried is purged.
const MinRetention = 168 * time.Hour

// envOf maps flag names to their environment variables.
var envOf = map[string]string{
	"database-url":               "REVOPS_DATABASE_URL",
	"data-dir":                   "REVOPS_DATA_DIR",
	"http-addr":                  "REVOPS_HTTP_ADDR",
	"public-url":                 "REVOPS_PUBLIC_URL",
	"temporal-address":           "REVOPS_TEMPORAL_ADDRESS",
	"temporal-compression":       "REVOPS_TEMPORAL_COMPRESSION",
	"temporal-namespace":         "REVOPS_TEMPORAL_NAMESPACE",
	"temporal-ui-addr":           "REVOPS_TEMPORAL_UI_ADDR",
	"temporal-traces":            "REVOPS_TEMPORAL_TRACES",
	"temporal-ui-url":            "REVOPS_TEMPORAL_UI_URL",
	"temporal-verbose":           "REVOPS_TEMPORAL_VERBOSE",
	"service-name":               "REVOPS_SERVICE_NAME",
	"tls":                        "REVOPS_TLS",
	"tls-cert":                   "REVOPS_TLS_CERT",
	"tls-key":                    "REVOPS_TLS_KEY",
	"webhook-retry-interval":     "REVOPS_WEBHOOK_RETRY_INTERVAL",
	"webhook-disable-after":      "REVOPS_WEBHOOK_DISABLE_AFTER",
	"webhook-failing-after":      "REVOPS_WEBHOOK_FAILING_AFTER",
	"webhook-order-max-wait":     "REVOPS_WEBHOOK_ORDER_MAX_WAIT",
	"webhook-ca-file":            "REVOPS_WEBHOOK_CA_FILE",
	"webhook-allow-private":      "REVOPS_WEBHOOK_ALLOW_PRIVATE",
	"trusted-proxies":            "REVOPS_TRUSTED_PROXIES",
	"metrics-addr":               "REVOPS_METRICS_ADDR",
	"rate-limit":                 "REVOPS_RATE_LIMIT",
	"env-rate-limit":             "REVOPS_ENV_RATE_LIMIT",
	"log-level":                  "REVOPS_LOG_LEVEL",
	"retention":                  "REVOPS_RETENTION",
	"replay-rate":                "REVOPS_REPLAY_RATE",
	"worker-activity-slots":      "REVOPS_WORKER_ACTIVITY_SLOTS",
	"db-connections":             "REVOPS_DB_CONNECTIONS",
	"db-job-connections":         "REVOPS_DB_JOB_CONNECTIONS",
	"db-lock-timeout":            "REVOPS_DB_LOCK_TIMEOUT",
	"db-statement-timeout":       "REVOPS_DB_STATEMENT_TIMEOUT",
	"meter-queries":              "REVOPS_METER_QUERIES",
	"meter-consumers":            "REVOPS_METER_CONSUMERS",
	"filter-tests":               "REVOPS_FILTER_TESTS",
	"paced-rate-per-environment": "REVOPS_PACED_RATE_PER_ENVIRONMENT",
	"paced-endpoints":            "REVOPS_PACED_ENDPOINTS",
	"alert-events-per-hour":      "REVOPS_ALERT_EVENTS_PER_HOUR",
	"seal-bound":                 SealBoundEnv,
}

// Load registers the shared settings on fs (which may already hold command-specific
// flags), parses args, then fills every setting not given as a flag from its variable.
func Load(fs *flag.FlagSet, mode string, args []string) (Config, error) {
	c := Config{Mode: mode}
	httpAddr := ":8443"
	if mode == "dev" {
		httpAddr = "127.0.0.1:8080"
	}
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres:// URL or SQLite file path (default: SQLite under the data dir)")
	fs.StringVar(&c.DataDir, "data-dir", ".revops", "where local files are kept")
	fs.StringVar(&c.HTTPAddr, "http-addr", httpAddr, "API and dashboard listen address")
	fs.StringVar(&c.PublicURL, "public-url", "", "public base URL of the API (default: derived from http-addr)")
	fs.StringVar(&c.TemporalAddress, "temporal-address", "127.0.0.1:7233", "Temporal frontend address")
	fs.StringVar(&c.TemporalNamespace, "temporal-namespace", "default", "Temporal namespace")
	fs.StringVar(&c.TemporalUIAddr, "temporal-ui-addr", "127.0.0.1:8233", "embedded Temporal UI listen address (dev)")
	fs.StringVar(&c.TemporalUIURL, "temporal-ui-url", "http://127.0.0.1:8233", "base URL used in links to Temporal runs")
	fs.BoolVar(&c.TemporalVerbose, "temporal-verbose", false, "show the embedded Temporal server's logs (dev)")
	fs.StringVar(&c.TemporalCompression, "temporal-compression", "none", "gRPC compression to Temporal: none or gzip")
	fs.BoolVar(&c.TemporalTraces, "temporal-traces", false, "let the embedded Temporal server read the OTEL_* variables and export its own traces too (dev; OTLP over grpc only)")
	fs.StringVar(&c.ServiceName, "service-name", "Revops", "name in the webhook acknowledgement sentence")
	fs.StringVar(&c.TLS, "tls", "", `"proxy" when a TLS-terminating proxy sits in front`)
	fs.StringVar(&c.TLSCert, "tls-cert", "", "TLS certificate file (PEM)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "TLS private key file (PEM)")
	fs.DurationVar(&c.WebhookRetryInterval, "webhook-retry-interval", time.Hour, "interval between webhook delivery attempts (shorten only for demos and tests)")
	fs.DurationVar(&c.WebhookDisableAfter, "webhook-disable-after", 120*time.Hour, "disable a webhook endpoint whose attempts have all failed for this long (0: never)")
	fs.DurationVar(&c.WebhookFailingAfter, "webhook-failing-after", 15*time.Minute, "call a webhook endpoint failing when its attempts have all failed for this long")
	fs.DurationVar(&c.WebhookOrderMaxWait, "webhook-order-max-wait", 168*time.Hour, "end a delivery failed (order_wait_expired) once it has waited this long behind its order lane")
	fs.StringVar(&c.WebhookCAFile, "webhook-ca-file", "", "extra PEM roots trusted for webhook TLS")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", mode == "dev", "allow private and loopback webhook destinations (default true in dev only)")
	fs.Var(&c.TrustedProxies, "trusted-proxies", "comma-separated CIDRs of proxies whose X-Forwarded-For gives the client address")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "127.0.0.1:9090", "Prometheus metrics listen address (empty: off)")
	fs.Float64Var(&c.RateLimit, "rate-limit", 100, "requests per second per API key, burst twice that; 0 turns it off")
	fs.Float64Var(&c.EnvRateLimit, "env-rate-limit", 500, "requests per second per environment across its keys, burst twice that; 0 turns it off")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.Retention, "retention", 720*time.Hour, "how long events, deliveries and attempts are kept (at least 168h; usage is never purged)")
	fs.Float64Var(&c.ReplayRate, "replay-rate", 50, "deliveries per second a bulk replay starts at most")
	fs.IntVar(&c.WorkerActivitySlots, "worker-activity-slots", DefaultWorkerActivitySlots, "concurrent webhook delivery attempts per worker process")
	fs.IntVar(&c.DBConnections, "db-connections", DefaultDBConnections, "database connections for requests and delivery records (PostgreSQL)")
	fs.IntVar(&c.DBJobConnections, "db-job-connections", DefaultDBJobConnections, "database connections for tenant jobs: backfills, purges, bulk replays, the meter consumer (PostgreSQL)")
	fs.DurationVar(&c.DBLockTimeout, "db-lock-timeout", 2*time.Second, "longest wait of a request on a database lock (then 429 lock_timeout)")
	fs.DurationVar(&c.DBStatementTimeout, "db-statement-timeout", 30*time.Second, "longest database statement of a request")
	fs.IntVar(&c.MeterQueries, "meter-queries", DefaultMeterQueries, "meter values queries of one environment at once in this replica")
	fs.IntVar(&c.MeterConsumers, "meter-consumers", DefaultMeterConsumers, "meter consumers per worker process")
	fs.IntVar(&c.FilterTests, "filter-tests", DefaultFilterTests, "webhook filter tests of one environment at once in this replica")
	fs.Float64Var(&c.PacedRatePerEnvironment, "paced-rate-per-environment", DefaultPacedRatePerEnvironment, "requests per second an environment's paced webhook endpoints may ask for together")
	fs.IntVar(&c.PacedEndpoints, "paced-endpoints", DefaultPacedEndpoints, "paced webhook endpoints of the whole deployment (size Temporal's dynamic config for them)")
	fs.IntVar(&c.AlertEventsPerHour, "alert-events-per-hour", DefaultAlertEventsPerHour, "meter-threshold-crossed events per environment and clock hour (UTC); firings past it are held back")
	if mode == "dev" {
		c.SealBound = On() // one process is the whole deployment: none of the release before reads beside it
	}
	fs.Var(&c.SealBound, "seal-bound", "write secrets bound to their row: true once every process runs this release, false, or auto (bound when none is stored unbound; true in dev)")

	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	given, err := applyEnv(fs)
	if err != nil {
		return Config{}, err
	}
	if _, fromEnv := os.LookupEnv(envOf["temporal-ui-url"]); mode == "dev" && !given["temporal-ui-url"] && !fromEnv {
		c.TemporalUIURL = "http://" + c.TemporalUIAddr // links point at the embedded UI wherever it listens
	}
	c.Pprof = os.Getenv(PprofEnv) == "1"
	kr, err := secretbox.Parse(os.Getenv(EncryptionKeysEnv))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EncryptionKeysEnv, err) // names keys by position, never shows one
	}
	c.Keyring = kr
	if c.DatabaseURL == "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "revops.db")
	}
	if c.PublicURL == "" {
		c.PublicURL = defaultPublicURL(c)
	}
	return c, c.validate()
}

// applyEnv sets every flag not given on the command line from its REVOPS_* variable,
// when set, and returns the flags given.
func applyEnv(fs *flag.FlagSet) (map[string]bool, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, env := range envOf {
		v, ok := os.LookupEnv(env)
		if !ok || given[name] {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", env, v, err)
		}
	}
	return given, nil
}

func (c Config) validate() error {
	var errs []error
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel))
	}
	if c.TLS != "" && c.TLS != "proxy" {
		errs = append(errs, fmt.Errorf("tls %q: the only mode is \"proxy\" (use --tls-cert/--tls-key for certificates)", c.TLS))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key go together"))
	}
	if c.RateLimit < 0 {
		errs = append(errs, fmt.Errorf("rate limit %v: must be 0 (off) or positive", c.RateLimit))
	}
	if !(c.EnvRateLimit >= 0) {
		errs = append(errs, fmt.Errorf("REVOPS_ENV_RATE_LIMIT (--env-rate-limit) %v: must be 0 (off) or positive", c.EnvRateLimit))
	}
	if c.TLS == "proxy" && len(c.TrustedProxies) == 0 {
		// Forwarded headers are believed only from listed proxies (CONTRACT §17): behind
		// a proxy with none listed, every request would be refused as plain HTTP and every
		// client would be the proxy. Refuse to start rather than run that way.
		errs = append(errs, errors.New("REVOPS_TLS=proxy needs REVOPS_TRUSTED_PROXIES (--trusted-proxies): list the TLS-terminating proxy's addresses or CIDRs, whose X-Forwarded-Proto and X-Forwarded-For are believed"))
	}
	if !(c.PacedRatePerEnvironment > 0) {
		errs = append(errs, fmt.Errorf("REVOPS_PACED_RATE_PER_ENVIRONMENT (--paced-rate-per-environment) %v: must be positive", c.PacedRatePerEnvironment))
	}
	if !(c.ReplayRate > 0) {
		errs = append(errs, fmt.Errorf("REVOPS_REPLAY_RATE (--replay-rate) %v: must be positive", c.ReplayRate))
	}
	if c.TemporalCompression != "none" && c.TemporalCompression != "gzip" {
		errs = append(errs, fmt.Errorf("REVOPS_TEMPORAL_COMPRESSION (--temporal-compression) %q: must be none or gzip", c.TemporalCompression))
	}
	if c.WorkerActivitySlots < 1 {
		errs = append(errs, fmt.Errorf("REVOPS_WORKER_ACTIVITY_SLOTS (--worker-activity-slots) %d: must be at least 1", c.WorkerActivitySlots))
	}
	for _, b := range []struct {
		name string
		n    int
	}{{"REVOPS_DB_CONNECTIONS (--db-connections)", c.DBConnections}, {"REVOPS_DB_JOB_CONNECTIONS (--db-job-connections)", c.DBJobConnections},
		{"REVOPS_METER_QUERIES (--meter-queries)", c.MeterQueries}, {"REVOPS_METER_CONSUMERS (--meter-consumers)", c.MeterConsumers},
		{"REVOPS_FILTER_TESTS (--filter-tests)", c.FilterTests}, {"REVOPS_PACED_ENDPOINTS (--paced-endpoints)", c.PacedEndpoints},
		{"REVOPS_ALERT_EVENTS_PER_HOUR (--alert-events-per-hour)", c.AlertEventsPerHour}} {
		if b.n < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be at least 1", b.name, b.n))
		}
	}
	if c.DBLockTimeout <= 0 {
		errs = append(errs, fmt.Errorf("REVOPS_DB_LOCK_TIMEOUT (--db-lock-timeout) %v: must be positive", c.DBLockTimeout))
	}
	if c.DBStatementTimeout <= 0 {
		errs = append(errs, fmt.Errorf("REVOPS_DB_STATEMENT_TIMEOUT (--db-statement-timeout) %v: must be positive", c.DBStatementTimeout))
	}
	if c.WebhookRetryInterval <= 0 {
		errs = append(errs, fmt.Errorf("webhook retry interval %v: must be positive", c.WebhookRetryInterval))
	}
	if c.WebhookFailingAfter <= 0 {
		errs = append(errs, fmt.Errorf("webhook failing after %v: must be positive", c.WebhookFailingAfter))
	}
	if c.WebhookOrderMaxWait <= 0 {
		errs = append(errs, fmt.Errorf("webhook order max wait %v: must be positive", c.WebhookOrderMaxWait))
	}
	if c.WebhookDisableAfter < 0 {
		errs = append(errs, fmt.Errorf("webhook disable after %v: must be 0 (never) or positive", c.WebhookDisableAfter))
	}
	if strings.TrimSpace(c.ServiceName) == "" {
		errs = append(errs, errors.New("service name is empty"))
	}
	if c.Retention < MinRetention {
		errs = append(errs, fmt.Errorf("REVOPS_RETENTION (--retention) %v: must be at least %v, the longest retry schedule", c.Retention, MinRetention))
	}
	return errors.Join(errs...)
}

func defaultPublicURL(c Config) string {
	scheme := "https"
	if c.Mode == "dev" {
		scheme = "http"
	}
	host := c.HTTPAddr
	if strings.HasPrefix(host, ":") {
		host = "localhost" + host
	}
	return scheme + "://" + host
}

// AckSentence is what a receiver's body must contain for a delivery to count.
func (c Config) AckSentence() string { return c.ServiceName + " API Event Received." }

// CheckServeTLS enforces CONTRACT §2 for the production API: HTTPS itself, or a
// TLS-terminating proxy in front; never plain HTTP.
func (c Config) CheckServeTLS() error {
	if c.TLSCert == "" && c.TLS != "proxy" {
		return errors.New("refusing to serve plain HTTP: give --tls-cert/--tls-key, or set REVOPS_TLS=proxy behind a TLS-terminating proxy")
	}
	return nil
}
