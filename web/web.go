// Package web holds the dashboard's templates and static assets, embedded in the binary so
// the API process serves them with no front-end build and no CDN.
package web

import "embed"

// FS holds templates/*.html and static/*.
//
//go:embed templates static
var FS embed.FS
