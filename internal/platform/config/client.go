package config

import (
	"os"
	"strings"
)

// Client is what the commands that call a Revops API rather than run one (`revops
// listen`, `revops trigger`, `revops webhooks replay`) take from the environment. These
// are defaults of their own flags (--api-key, --api, --data-dir), which still win; an
// empty variable counts as unset. They are not service settings, so EnvVars leaves them
// out.
type Client struct {
	// APIKey is REVOPS_API_KEY, the secret key sent; empty: the dev key `revops dev` saved.
	APIKey string
	// APIURL is the API called without --api: REVOPS_PUBLIC_URL (without a trailing
	// slash), else the dev API at REVOPS_HTTP_ADDR (127.0.0.1:8080 by default).
	APIURL string
	// DataDir is REVOPS_DATA_DIR, else .revops: where `revops dev` keeps its keys.
	DataDir string
}

// APIKeyEnv is the variable holding the secret key the client commands send.
const APIKeyEnv = "REVOPS_API_KEY"

// ClientEnv reads the client commands' defaults from the environment.
func ClientEnv() Client {
	c := Client{
		APIKey:  os.Getenv(APIKeyEnv),
		APIURL:  "http://" + envOr(envOf["http-addr"], "127.0.0.1:8080"),
		DataDir: envOr(envOf["data-dir"], ".revops"),
	}
	if u := os.Getenv(envOf["public-url"]); u != "" {
		c.APIURL = strings.TrimRight(u, "/")
	}
	return c
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
