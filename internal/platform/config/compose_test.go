package config_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/revops/revops/internal/platform/config"
)

type composeFile struct {
	Services map[string]struct {
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   map[string]any    `yaml:"depends_on"`
		Healthcheck map[string]any    `yaml:"healthcheck"`
	} `yaml:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// Every REVOPS_* variable the stack sets must be one the binary reads: a typo would be
// silently ignored in production.
func TestComposeSetsOnlyKnownVariables(t *testing.T) {
	known := config.EnvVars()
	c := readCompose(t)
	seen := 0
	for name, svc := range c.Services {
		for v := range svc.Environment {
			if !strings.HasPrefix(v, "REVOPS_") {
				continue
			}
			seen++
			if !slices.Contains(known, v) {
				t.Errorf("service %s sets %s, which revops does not read", name, v)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no REVOPS_* variable found: the YAML anchors were not resolved?")
	}
}

// The README's table of services must match the compose file, and the Revops services run
// the right subcommands with health checks and ordering.
func TestComposeMatchesReadme(t *testing.T) {
	c := readCompose(t)
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Production stack")
	if !ok {
		t.Fatal("README has no '## Production stack' section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(section, -1)
	if len(rows) < 5 {
		t.Fatalf("README names %d services; want the whole stack", len(rows))
	}
	for _, r := range rows {
		if _, ok := c.Services[r[1]]; !ok {
			t.Errorf("README names service %q, missing from docker-compose.yml", r[1])
		}
	}
	for name, cmd := range map[string]string{"revops-api": "api", "revops-worker": "worker"} {
		svc, ok := c.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		if len(svc.Command) == 0 || svc.Command[0] != cmd {
			t.Errorf("%s runs %v, want revops %s", name, svc.Command, cmd)
		}
		if svc.Healthcheck == nil || len(svc.DependsOn) == 0 {
			t.Errorf("%s needs a healthcheck and depends_on", name)
		}
		if !strings.Contains(string(readme), "`revops "+cmd+"`") {
			t.Errorf("README does not document `revops %s`", cmd)
		}
	}
}

// The Temporal UI shows every tenant's runs: the shipped stack runs it read-only, with no
// cross-origin caller (CONTRACT §17).
func TestComposeTemporalUIIsReadOnly(t *testing.T) {
	ui, ok := readCompose(t).Services["temporal-ui"]
	if !ok {
		t.Fatal("no temporal-ui service")
	}
	if ui.Environment["TEMPORAL_DISABLE_WRITE_ACTIONS"] != "true" {
		t.Errorf("TEMPORAL_DISABLE_WRITE_ACTIONS = %q, want \"true\"", ui.Environment["TEMPORAL_DISABLE_WRITE_ACTIONS"])
	}
	if v, set := ui.Environment["TEMPORAL_CORS_ORIGINS"]; set {
		t.Errorf("TEMPORAL_CORS_ORIGINS = %q, want none", v)
	}
}
