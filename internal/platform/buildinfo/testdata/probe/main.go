// Command probe prints buildinfo.Read() as JSON: a test binary's build information lists
// no dependencies, so the test builds this one to read what a real binary records.
package main

import (
	"encoding/json"
	"os"

	// Linked as the revops binary links them.
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/server/common/headers"

	"github.com/revops/revops/internal/platform/buildinfo"
)

func main() {
	_ = json.NewEncoder(os.Stdout).Encode(buildinfo.Read())
}
