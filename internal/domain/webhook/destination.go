package webhook

import (
	"context"
	"errors"
	"net/url"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/ssrf"
)

// ErrURLNotAllowed is a destination refused at save time: it resolves to a loopback,
// private, link-local or metadata address, or does not resolve (CONTRACT §8). It comes
// wrapped in an *apperr.InvalidError with CodeURLNotAllowed and param "url".
var ErrURLNotAllowed = errors.New("webhook destination not allowed")

// CodeURLNotAllowed is the error code of ErrURLNotAllowed.
const CodeURLNotAllowed = "url_not_allowed"

// checkDestination is the save-time SSRF check of a validated URL; the Sender's dialer
// checks again at dial time, when the name may resolve otherwise.
func (e *Endpoints) checkDestination(ctx context.Context, rawURL string) error {
	u, _ := url.Parse(rawURL) // validated
	err := ssrf.CheckHost(ctx, nil, u.Hostname(), e.AllowPrivate)
	switch {
	case errors.Is(err, ssrf.ErrNotAllowed):
		return apperr.Invalid(ErrURLNotAllowed, CodeURLNotAllowed, "url",
			"Webhooks cannot be sent to %s: it resolves to a loopback, private, link-local or metadata address.", u.Hostname())
	case errors.Is(err, ssrf.ErrUnresolvable):
		return apperr.Invalid(ErrURLNotAllowed, CodeURLNotAllowed, "url",
			"Webhooks cannot be sent to %s: the host name does not resolve.", u.Hostname())
	}
	return err
}
