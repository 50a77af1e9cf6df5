// Package buildinfo names what a binary was built from: its module version, the VCS
// revision, and the Temporal server and SDK it links (from runtime/debug.ReadBuildInfo).
// `revops version`, every command's start-up log line and /healthz show it.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// Unknown stands for a field the build did not record: `go build -buildvcs=false` (as CI
// builds) records no revision, a test binary has no module version.
const Unknown = "unknown"

// Modules whose versions are reported.
const (
	TemporalServerModule = "go.temporal.io/server"
	TemporalSDKModule    = "go.temporal.io/sdk"
)

// version overrides the module version when set at link time:
// -ldflags "-X github.com/revops/revops/internal/platform/buildinfo.version=v1.2.3".
var version string

// Info is what the binary was built from. Fields the build did not record are Unknown.
type Info struct {
	Version        string `json:"version"`
	Revision       string `json:"revision"`
	Modified       bool   `json:"modified"`
	GoVersion      string `json:"go_version"`
	TemporalServer string `json:"temporal_server"`
	TemporalSDK    string `json:"temporal_sdk"`
}

// Read is the running binary's build information (read once: it never changes).
func Read() Info { return read() }

var read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return fromBuildInfo(bi, version)
})

func fromBuildInfo(bi *debug.BuildInfo, override string) Info {
	in := Info{Version: Unknown, Revision: Unknown, GoVersion: Unknown, TemporalServer: Unknown, TemporalSDK: Unknown}
	if bi != nil {
		in.GoVersion = orUnknown(bi.GoVersion)
		// "(devel)" is what Go records for a build outside a tagged module and without VCS
		// stamping: no version at all.
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			in.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = orUnknown(s.Value)
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				v = d.Replace.Version // what was really linked
			}
			switch d.Path {
			case TemporalServerModule:
				in.TemporalServer = orUnknown(v)
			case TemporalSDKModule:
				in.TemporalSDK = orUnknown(v)
			}
		}
	}
	if override != "" {
		in.Version = override
	}
	return in
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return Unknown
	}
	return s
}

// String is the one line `revops version` prints.
func (i Info) String() string {
	rev := i.Revision
	if i.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("revops %s (revision %s, %s; temporal server %s, sdk %s)",
		i.Version, rev, i.GoVersion, i.TemporalServer, i.TemporalSDK)
}

// LogAttrs are the fields of a start-up log line.
func (i Info) LogAttrs() []any {
	return []any{"version", i.Version, "revision", i.Revision, "modified", i.Modified,
		"go", i.GoVersion, "temporal_server", i.TemporalServer, "temporal_sdk", i.TemporalSDK}
}
