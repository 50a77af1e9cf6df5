package buildinfo

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	sdkversion "go.temporal.io/sdk/temporal"
)

// requiredVersion reads a module's version from go.mod.
func requiredVersion(t *testing.T, module string) string {
	t.Helper()
	b, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s not in go.mod", module)
	}
	return string(m[1])
}

// A binary's information names the Temporal modules at the versions go.mod pins, and
// every field has a value, even when the build recorded no VCS revision (CI builds with
// -buildvcs=false). A test binary records no dependencies, so this builds a small one.
func TestReadNamesTemporalVersions(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "probe")
	build := exec.Command("go", "build", "-o", bin, "./testdata/probe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build probe: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("run probe: %v", err)
	}
	var in Info
	if err := json.Unmarshal(out, &in); err != nil {
		t.Fatalf("probe printed %q: %v", out, err)
	}
	if want := requiredVersion(t, TemporalSDKModule); in.TemporalSDK != want {
		t.Errorf("temporal sdk %q, go.mod has %q", in.TemporalSDK, want)
	}
	if "v"+sdkversion.SDKVersion != in.TemporalSDK {
		t.Errorf("temporal sdk %q, the SDK says it is %q", in.TemporalSDK, sdkversion.SDKVersion)
	}
	if want := requiredVersion(t, TemporalServerModule); in.TemporalServer != want {
		t.Errorf("temporal server %q, go.mod has %q", in.TemporalServer, want)
	}
	for name, v := range map[string]string{"version": in.Version, "revision": in.Revision, "go": in.GoVersion} {
		if v == "" {
			t.Errorf("%s is empty, want a value or %q", name, Unknown)
		}
	}
	line := in.String()
	for _, part := range []string{in.Version, "revision " + in.Revision, "temporal server " + in.TemporalServer, "sdk " + in.TemporalSDK} {
		if !strings.Contains(line, part) {
			t.Errorf("%q lacks %q", line, part)
		}
	}
}

// Each way a build records (or does not record) its origin gives a complete Info.
func TestFromBuildInfo(t *testing.T) {
	deps := []*debug.Module{
		{Path: TemporalSDKModule, Version: "v1.50.0"},
		{Path: TemporalServerModule, Version: "v1.32.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.32.1-fork"}},
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		override string
		want     Info
	}{
		{"no build info", nil, "", Info{Version: Unknown, Revision: Unknown, GoVersion: Unknown, TemporalServer: Unknown, TemporalSDK: Unknown}},
		{"buildvcs=false, devel", &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Deps: deps}, "",
			Info{Version: Unknown, Revision: Unknown, GoVersion: "go1.26", TemporalServer: "v1.32.1-fork", TemporalSDK: "v1.50.0"}},
		{"vcs stamped, dirty", &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v0.3.0"}, Deps: deps,
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}, "",
			Info{Version: "v0.3.0", Revision: "abc123", Modified: true, GoVersion: "go1.26", TemporalServer: "v1.32.1-fork", TemporalSDK: "v1.50.0"}},
		{"version set at link time", &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}}, "20261123",
			Info{Version: "20261123", Revision: Unknown, GoVersion: "go1.26", TemporalServer: Unknown, TemporalSDK: Unknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromBuildInfo(tt.bi, tt.override); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
