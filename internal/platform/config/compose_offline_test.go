package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// What the offline checks read of docker-compose.yml, beside composeFile.
type composeDeploy struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// operatorFiles are mounted from the host but not kept in git: the operator provides them
// (deploy/README.md says how).
var operatorFiles = []string{"deploy/tls"}

func readDeploy(t *testing.T) composeDeploy {
	t.Helper()
	b, err := os.ReadFile("../../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeDeploy
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return c
}

// Every image is pinned by tag: an untagged or `latest` image changes under the stack at
// the next pull (the deprecated temporalio/auto-setup stopped being built that way).
func TestComposeImagesArePinned(t *testing.T) {
	pinned := regexp.MustCompile(`^[a-z0-9./_-]+:([A-Za-z0-9_.-]+)(@sha256:[0-9a-f]{64})?$`)
	for name, svc := range readDeploy(t).Services {
		if svc.Image == "" {
			if svc.Build == nil {
				t.Errorf("service %s has neither image nor build", name)
			}
			continue
		}
		m := pinned.FindStringSubmatch(svc.Image)
		if m == nil {
			t.Errorf("service %s: image %q has no tag", name, svc.Image)
			continue
		}
		if m[1] == "latest" {
			t.Errorf("service %s: image %q is not pinned (latest)", name, svc.Image)
		}
		if strings.Contains(svc.Image, "auto-setup") {
			t.Errorf("service %s: %s is deprecated and no longer built", name, svc.Image)
		}
	}
}

// The Temporal server and its admin tools (temporal-sql-tool, schema files) are the release
// go.mod pins, the one the SDK and the prodlike test are tested against.
func TestComposeTemporalIsTheReleaseGoModPins(t *testing.T) {
	gomod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server\s+v(\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod does not require go.temporal.io/server")
	}
	c := readDeploy(t)
	for _, name := range []string{"temporal", "temporal-schema"} {
		img := c.Services[name].Image
		_, tag, _ := strings.Cut(img, ":")
		if tag != string(m[1]) {
			t.Errorf("service %s runs %s; go.mod pins go.temporal.io/server v%s", name, img, m[1])
		}
	}
}

// Every file or directory the stack mounts from the repository exists in it; named
// volumes are declared.
func TestComposeMountsExist(t *testing.T) {
	c := readDeploy(t)
	seen := 0
	for name, svc := range c.Services {
		for _, v := range svc.Volumes {
			src, _, ok := strings.Cut(v, ":")
			if !ok {
				t.Errorf("service %s: volume %q has no target", name, v)
				continue
			}
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("service %s mounts volume %q, not declared under volumes:", name, src)
				}
				continue
			}
			rel := filepath.Clean(src)
			if isOperatorFile(rel) {
				continue
			}
			seen++
			if _, err := os.Stat(filepath.Join("../../..", rel)); err != nil {
				t.Errorf("service %s mounts %s, missing from the repository: %v", name, src, err)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no file mounted from the repository: the parse missed the volumes?")
	}
	readme, err := os.ReadFile("../../../deploy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range operatorFiles {
		if !strings.Contains(string(readme), "`"+strings.TrimPrefix(f, "deploy/")) {
			t.Errorf("deploy/README.md does not say how to provide %s", f)
		}
	}
}

func isOperatorFile(rel string) bool {
	for _, f := range operatorFiles {
		if rel == f || strings.HasPrefix(rel, f+"/") {
			return true
		}
	}
	return false
}

// The production order of CONTRACT §16: migrate and temporal-setup run once, to
// completion, before any api or worker starts; Temporal's schema is set up before the
// server starts, and the server runs the dynamic config we ship.
func TestComposeRunsSetupStepsFirst(t *testing.T) {
	c := readDeploy(t)
	oneShots := map[string]string{"revops-migrate": "migrate", "revops-temporal-setup": "temporal-setup"}
	for name, cmd := range oneShots {
		svc, ok := c.Services[name]
		if !ok {
			t.Errorf("no service %s", name)
			continue
		}
		if len(svc.Command) == 0 || svc.Command[0] != cmd {
			t.Errorf("%s runs %v, want revops %s", name, svc.Command, cmd)
		}
	}
	for _, name := range []string{"revops-api", "revops-worker"} {
		for dep := range oneShots {
			if got := c.Services[name].DependsOn[dep].Condition; got != "service_completed_successfully" {
				t.Errorf("%s depends on %s with condition %q, want service_completed_successfully", name, dep, got)
			}
		}
	}
	if got := c.Services["temporal"].DependsOn["temporal-schema"].Condition; got != "service_completed_successfully" {
		t.Errorf("temporal depends on temporal-schema with %q, want service_completed_successfully", got)
	}
	for name, svc := range c.Services {
		for dep := range svc.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
			}
		}
	}

	tmp := c.Services["temporal"]
	target := tmp.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	if target == "" {
		t.Fatal("temporal sets no DYNAMIC_CONFIG_FILE_PATH")
	}
	mounted := false
	for _, v := range tmp.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && filepath.Clean(parts[0]) == "deploy/temporal/dynamicconfig.yaml" && parts[1] == target {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("temporal does not mount deploy/temporal/dynamicconfig.yaml at %s", target)
	}
}

// The Temporal UI has no authentication of its own: published ports bind loopback, and
// the Temporal frontend is not published at all.
func TestComposePublishesUIOnLoopbackOnly(t *testing.T) {
	c := readDeploy(t)
	ui := c.Services["temporal-ui"]
	if len(ui.Ports) == 0 {
		t.Fatal("temporal-ui publishes no port")
	}
	for _, p := range ui.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("temporal-ui publishes %q on every interface, want 127.0.0.1:…", p)
		}
	}
	if len(c.Services["temporal"].Ports) != 0 {
		t.Errorf("temporal publishes %v: its frontend has no authentication", c.Services["temporal"].Ports)
	}
}
