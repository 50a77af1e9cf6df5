package config

import (
	"flag"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, mode string, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(fs, mode, args)
}

func TestDefaults(t *testing.T) {
	c, err := load(t, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || !c.WebhookAllowPrivate || c.WebhookRetryInterval != time.Hour || c.WebhookDisableAfter != 120*time.Hour || c.DatabaseURL != ".revops/revops.db" {
		t.Errorf("dev defaults: %+v", c)
	}
	s, err := load(t, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if s.HTTPAddr != ":8443" || s.WebhookAllowPrivate || s.AckSentence() != "Revops API Event Received." ||
		s.RateLimit != 100 || s.EnvRateLimit != 500 {
		t.Errorf("serve defaults: %+v", s)
	}
}

func TestEnvAndFlagPrecedence(t *testing.T) {
	t.Setenv("REVOPS_HTTP_ADDR", "127.0.0.1:9999")
	t.Setenv("REVOPS_WEBHOOK_RETRY_INTERVAL", "2s")
	t.Setenv("REVOPS_WEBHOOK_DISABLE_AFTER", "0")
	t.Setenv("REVOPS_SERVICE_NAME", "Acme")
	c, err := load(t, "serve", "--http-addr", "127.0.0.1:1111")
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:1111" {
		t.Errorf("flag should win: %s", c.HTTPAddr)
	}
	if c.WebhookRetryInterval != 2*time.Second || c.WebhookDisableAfter != 0 || c.AckSentence() != "Acme API Event Received." {
		t.Errorf("env not applied: %+v", c)
	}
}

func TestInvalidValues(t *testing.T) {
	for _, tc := range []struct {
		env, val, want string
	}{
		{"REVOPS_WEBHOOK_RETRY_INTERVAL", "soon", "REVOPS_WEBHOOK_RETRY_INTERVAL"},
		{"REVOPS_RATE_LIMIT", "-1", "rate limit"},
		{"REVOPS_WEBHOOK_DISABLE_AFTER", "-1h", "disable after"},
		{"REVOPS_WEBHOOK_DISABLE_AFTER", "never", "REVOPS_WEBHOOK_DISABLE_AFTER"},
		{"REVOPS_LOG_LEVEL", "loud", "log level"},
		{"REVOPS_REPLAY_RATE", "0", "REVOPS_REPLAY_RATE"},
		{"REVOPS_REPLAY_RATE", "-5", "REVOPS_REPLAY_RATE"},
		{"REVOPS_REPLAY_RATE", "NaN", "REVOPS_REPLAY_RATE"},
		{"REVOPS_REPLAY_RATE", "fast", "REVOPS_REPLAY_RATE"},
		{"REVOPS_WORKER_ACTIVITY_SLOTS", "0", "REVOPS_WORKER_ACTIVITY_SLOTS"},
		{"REVOPS_WORKER_ACTIVITY_SLOTS", "many", "REVOPS_WORKER_ACTIVITY_SLOTS"},
		{"REVOPS_TEMPORAL_COMPRESSION", "zstd", "REVOPS_TEMPORAL_COMPRESSION"},
		{"REVOPS_TLS", "on", "tls"},
		{"REVOPS_TLS", "proxy", "REVOPS_TRUSTED_PROXIES"}, // CONTRACT §17: proxy mode names the proxies
		{"REVOPS_ENV_RATE_LIMIT", "-1", "REVOPS_ENV_RATE_LIMIT"},
		{"REVOPS_ENV_RATE_LIMIT", "NaN", "REVOPS_ENV_RATE_LIMIT"},
		{"REVOPS_WEBHOOK_ALLOW_PRIVATE", "maybe", "REVOPS_WEBHOOK_ALLOW_PRIVATE"},
		{"REVOPS_TRUSTED_PROXIES", "10.0.0.0/33", "REVOPS_TRUSTED_PROXIES"},
		{"REVOPS_TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal", "proxy.internal"},
		{"REVOPS_TRUSTED_PROXIES", "10.1.2.3/8", "did you mean 10.0.0.0/8"},
		{"REVOPS_TRUSTED_PROXIES", "fe80::1%eth0", "REVOPS_TRUSTED_PROXIES"},
	} {
		t.Run(tc.env+"="+tc.val, func(t *testing.T) {
			t.Setenv(tc.env, tc.val)
			_, err := load(t, "serve")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
	if _, err := load(t, "serve", "--no-such-flag"); err == nil {
		t.Error("unknown flag accepted")
	}
}

func TestEnvVarsAreContractNames(t *testing.T) {
	vars := strings.Join(EnvVars(), " ")
	for _, want := range []string{"REVOPS_DATABASE_URL", "REVOPS_DATA_DIR", "REVOPS_HTTP_ADDR", "REVOPS_TEMPORAL_ADDRESS",
		"REVOPS_TEMPORAL_NAMESPACE", "REVOPS_TEMPORAL_UI_ADDR", "REVOPS_TEMPORAL_UI_URL", "REVOPS_SERVICE_NAME", "REVOPS_TLS",
		"REVOPS_TLS_CERT", "REVOPS_TLS_KEY", "REVOPS_WEBHOOK_RETRY_INTERVAL", "REVOPS_WEBHOOK_CA_FILE",
		"REVOPS_WEBHOOK_ALLOW_PRIVATE", "REVOPS_METRICS_ADDR", "REVOPS_RATE_LIMIT", "REVOPS_LOG_LEVEL", "REVOPS_PUBLIC_URL",
		"REVOPS_TRUSTED_PROXIES", "REVOPS_WEBHOOK_DISABLE_AFTER", "REVOPS_REPLAY_RATE", "REVOPS_ENV_RATE_LIMIT",
		"REVOPS_WORKER_ACTIVITY_SLOTS", "REVOPS_TEMPORAL_COMPRESSION"} {
		if !strings.Contains(vars, want) {
			t.Errorf("missing %s", want)
		}
	}
}

func TestServeRefusesPlainHTTP(t *testing.T) {
	plain, err := load(t, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.CheckServeTLS(); err == nil || !strings.Contains(err.Error(), "plain HTTP") {
		t.Errorf("serve without TLS: %v", err)
	}
	proxy, _ := load(t, "serve", "--tls", "proxy", "--trusted-proxies", "10.0.0.0/8")
	certs, _ := load(t, "serve", "--tls-cert", "c.pem", "--tls-key", "k.pem")
	for _, c := range []Config{proxy, certs} {
		if err := c.CheckServeTLS(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := load(t, "serve", "--tls-cert", "c.pem"); err == nil {
		t.Error("a certificate without its key was accepted")
	}
}

// Behind a TLS-terminating proxy, forwarded headers are believed only from the proxies
// listed (CONTRACT §17): without a list, no process starts, and the error names it.
func TestProxyModeNeedsTrustedProxies(t *testing.T) {
	for _, mode := range []string{"serve", "api", "worker", "dev"} {
		_, err := load(t, mode, "--tls", "proxy")
		if err == nil || !strings.Contains(err.Error(), "REVOPS_TRUSTED_PROXIES") {
			t.Errorf("%s with REVOPS_TLS=proxy and no proxies: %v, want a refusal naming REVOPS_TRUSTED_PROXIES", mode, err)
		}
	}
	t.Setenv("REVOPS_TLS", "proxy")
	t.Setenv("REVOPS_TRUSTED_PROXIES", "10.0.0.0/8")
	if _, err := load(t, "api"); err != nil {
		t.Errorf("proxy mode with trusted proxies: %v", err)
	}
	if _, err := load(t, "api", "--trusted-proxies", ""); err == nil {
		t.Error("an empty --trusted-proxies flag over the variable was accepted in proxy mode")
	}
}

func TestDevLinksFollowTheEmbeddedUI(t *testing.T) {
	c, err := load(t, "dev", "--temporal-ui-addr", "127.0.0.1:18233")
	if err != nil {
		t.Fatal(err)
	}
	if c.TemporalUIURL != "http://127.0.0.1:18233" {
		t.Errorf("dev UI URL %q", c.TemporalUIURL)
	}
	t.Setenv("REVOPS_TEMPORAL_UI_URL", "https://temporal.example.com")
	if c, _ := load(t, "dev"); c.TemporalUIURL != "https://temporal.example.com" {
		t.Errorf("explicit UI URL overridden: %q", c.TemporalUIURL)
	}
}

// An explicit REVOPS_WEBHOOK_ALLOW_PRIVATE (or flag) wins in every mode; only when neither
// is given does dev default to true (CONTRACT §12).
func TestWebhookAllowPrivatePrecedence(t *testing.T) {
	for _, tc := range []struct {
		name, mode, env string // env "" = unset
		args            []string
		want            bool
	}{
		{"dev default", "dev", "", nil, true},
		{"dev variable false", "dev", "false", nil, false},
		{"dev variable 0", "dev", "0", nil, false},
		{"dev variable true", "dev", "true", nil, true},
		{"dev flag false", "dev", "", []string{"--webhook-allow-private=false"}, false},
		{"dev flag beats variable", "dev", "false", []string{"--webhook-allow-private=true"}, true},
		{"serve default", "serve", "", nil, false},
		{"serve variable true", "serve", "true", nil, true},
		{"worker variable false", "worker", "false", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("REVOPS_WEBHOOK_ALLOW_PRIVATE", tc.env)
			}
			c, err := load(t, tc.mode, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.WebhookAllowPrivate != tc.want {
				t.Errorf("WebhookAllowPrivate = %v, want %v", c.WebhookAllowPrivate, tc.want)
			}
		})
	}
}

func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string   // normalised list
		in, out   []string // addresses inside and outside the list
	}{
		{"none by default", "", nil, "", nil, []string{"10.0.0.1", "127.0.0.1", "::1"}},
		{"variable", "10.0.0.0/8, 192.168.1.7", nil, "10.0.0.0/8,192.168.1.7/32",
			[]string{"10.2.3.4", "::ffff:10.2.3.4", "192.168.1.7"}, []string{"11.0.0.1", "192.168.1.8"}},
		{"IPv6 and zones", "fd00::/8,::1", nil, "fd00::/8,::1/128",
			[]string{"fd12::1", "fd12::1%eth0", "::1"}, []string{"fe80::1", "127.0.0.1"}},
		{"mapped CIDR matches IPv4 peers", "::ffff:10.0.0.0/104", nil, "10.0.0.0/8", []string{"10.9.9.9"}, nil},
		{"flag beats variable", "10.0.0.0/8", []string{"--trusted-proxies", "172.16.0.0/12"}, "172.16.0.0/12",
			[]string{"172.20.0.1"}, []string{"10.0.0.1"}},
		{"empty flag clears", "10.0.0.0/8", []string{"--trusted-proxies", ""}, "", nil, []string{"10.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("REVOPS_TRUSTED_PROXIES", tc.env)
			}
			c, err := load(t, "serve", tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.TrustedProxies.String(); got != tc.want {
				t.Errorf("TrustedProxies = %q, want %q", got, tc.want)
			}
			for _, a := range tc.in {
				if !c.TrustedProxies.Contains(netip.MustParseAddr(a)) {
					t.Errorf("%s should be trusted", a)
				}
			}
			for _, a := range tc.out {
				if c.TrustedProxies.Contains(netip.MustParseAddr(a)) {
					t.Errorf("%s should not be trusted", a)
				}
			}
		})
	}
}

// README promises that every setting is a flag and a variable: its table must name each.
func TestReadmeListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range EnvVars() {
		if !strings.Contains(string(readme), "| `"+v+"`") && !strings.Contains(string(readme), ", `"+v+"`") {
			t.Errorf("README's configuration table does not list %s", v)
		}
	}
}
