package config

import (
	"flag"
	"io"
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
	if c.HTTPAddr != "127.0.0.1:8080" || !c.WebhookAllowPrivate || c.WebhookRetryInterval != time.Hour || c.DatabaseURL != ".revops/revops.db" {
		t.Errorf("dev defaults: %+v", c)
	}
	s, err := load(t, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if s.HTTPAddr != ":8443" || s.WebhookAllowPrivate || s.AckSentence() != "Revops API Event Received." {
		t.Errorf("serve defaults: %+v", s)
	}
}

func TestEnvAndFlagPrecedence(t *testing.T) {
	t.Setenv("REVOPS_HTTP_ADDR", "127.0.0.1:9999")
	t.Setenv("REVOPS_WEBHOOK_RETRY_INTERVAL", "2s")
	t.Setenv("REVOPS_SERVICE_NAME", "Acme")
	c, err := load(t, "serve", "--http-addr", "127.0.0.1:1111")
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:1111" {
		t.Errorf("flag should win: %s", c.HTTPAddr)
	}
	if c.WebhookRetryInterval != 2*time.Second || c.AckSentence() != "Acme API Event Received." {
		t.Errorf("env not applied: %+v", c)
	}
}

func TestInvalidValues(t *testing.T) {
	for _, tc := range []struct {
		env, val, want string
	}{
		{"REVOPS_WEBHOOK_RETRY_INTERVAL", "soon", "REVOPS_WEBHOOK_RETRY_INTERVAL"},
		{"REVOPS_RATE_LIMIT", "-1", "rate limit"},
		{"REVOPS_LOG_LEVEL", "loud", "log level"},
		{"REVOPS_TLS", "on", "tls"},
		{"REVOPS_WEBHOOK_ALLOW_PRIVATE", "maybe", "REVOPS_WEBHOOK_ALLOW_PRIVATE"},
	} {
		t.Run(tc.env, func(t *testing.T) {
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
		"REVOPS_WEBHOOK_ALLOW_PRIVATE", "REVOPS_METRICS_ADDR", "REVOPS_RATE_LIMIT", "REVOPS_LOG_LEVEL", "REVOPS_PUBLIC_URL"} {
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
	proxy, _ := load(t, "serve", "--tls", "proxy")
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
