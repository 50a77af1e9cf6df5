// Package archtest checks the shape of the module from `go list` and the source: that
// docs/architecture.md draws the module as it is (its layers, its package tables, its
// import list, redrawn by `go test ./internal/testkit/archtest/ -run TestArchitectureDoc
// -update`), which packages may import which, and how long production files and
// functions may grow. It holds only tests.
package archtest
