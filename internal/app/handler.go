package app

import (
	"net/http"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/dashboard"
	"github.com/revops/revops/internal/store"
)

// NewHandler is the HTTP handler of an API process: the API's engine (api.New) with the
// dashboard mounted under /dashboard (CONTRACT §11), behind the same HTTPS and
// authentication middleware. The dashboard shares the API's parts — its webhook
// endpoints, replays and meters — so a form and its /v1 route follow one set of rules.
// Run serves it; tests that serve the API without Run call it with parts they build. st
// is the API's storage too (d.Store): the dashboard reads it whole, the API through the
// parts its domain packages declare.
func NewHandler(st *store.Store, d api.Deps) http.Handler {
	d.Store = st
	r := api.New(d)
	dashboard.New(dashboard.Deps{Config: d.Config, Store: st, Keys: d.Keys, Log: d.Log,
		Endpoints: d.Endpoints, Meters: d.Meters}).Routes(r)
	return r
}
