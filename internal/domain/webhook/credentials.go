package webhook

import (
	"net/url"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// Credentials in an endpoint's URL (user:password@host, CONTRACT §13, §25). An endpoint
// URL is stored, shown and sent as it is, so what its user information holds is kept in
// clear wherever the URL goes; a custom header holds the same credentials sealed and
// never shown again. A new or changed URL with user information is refused; one saved
// before this rule keeps delivering (the HTTP client sends it as Basic authentication, as
// it always did), and the endpoint carries a warning until it is moved.

// CodeURLCredentials names the warning of an endpoint whose URL carries credentials.
const CodeURLCredentials = "url_credentials"

// moveCredentials is what to do instead, said by the refusal and the warning alike.
const moveCredentials = `send them in a custom header instead (for Basic authentication, "Authorization": "Basic <base64 of user:password>"), where they are kept encrypted and never shown again`

// Warning is something an endpoint does that works but should change; the endpoint
// object lists them (warnings) and the dashboard shows them.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warnings are ep's warnings, none as an empty list.
func Warnings(ep models.WebhookEndpoint) []Warning {
	out := []Warning{}
	if HasCredentials(ep.URL) {
		out = append(out, Warning{Code: CodeURLCredentials,
			Message: "This endpoint's URL carries credentials (user:password@), which are stored and shown in clear: " +
				moveCredentials + ", and remove them from the URL."})
	}
	return out
}

// HasCredentials tells whether raw has user information.
func HasCredentials(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.User != nil
}

// checkCredentials records a fault when u, the url member, carries user information and
// is not saved (the endpoint's URL as saved, sent back unchanged by a PATCH or a form).
func checkCredentials(fs *apperr.Faults, u *url.URL, raw, saved string) bool {
	if u.User == nil || raw == saved {
		return true
	}
	fs.Invalid("url", "url must not carry credentials (user:password@): %s.", moveCredentials)
	return false
}
