// Package archtest checks the shape of the module from `go list` and the source: which
// packages may import which (docs/architecture.md), and how long production files and
// functions may grow. It holds only tests.
package archtest
