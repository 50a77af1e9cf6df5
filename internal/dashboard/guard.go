package dashboard

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// maxFormBytes bounds a dashboard form (CONTRACT §15). The largest real one, a webhook
// URL with its token, is a few KiB.
const maxFormBytes = 64 << 10

// readForm reads a POST body once, before anyone else does: only URL-encoded forms (every
// dashboard form; multipart would let a client make the server buffer files), at most
// maxFormBytes. A refused body gets a 4xx page; nothing after it runs.
func (h *handler) readForm(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	if ct := c.ContentType(); ct != "" || c.Request.ContentLength > 0 {
		if mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
			h.refuse(c, http.StatusUnsupportedMediaType, "Forms must be sent as application/x-www-form-urlencoded.")
			return
		}
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxFormBytes)
	if err := c.Request.ParseForm(); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			h.refuse(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d KiB.", maxFormBytes>>10))
			return
		}
		h.refuse(c, http.StatusBadRequest, "The form could not be read.")
		return
	}
	c.Next()
}

// checkInput applies CONTRACT §15 to everything a request names: a path id that cannot be
// an id is not found; query and form strings must be valid UTF-8 without NUL, and all but
// the password free of control characters too. A fault is shown
// on the form it came from (see formFault), never passed on to the store.
func (h *handler) checkInput(c *gin.Context) {
	for _, p := range c.Params {
		if textcheck.Line(p.Value) != nil || (p.Key == "id" && !textcheck.IsID(p.Value)) {
			h.fail(c, fmt.Errorf("path %s: %w", p.Key, apperr.ErrNotFound))
			c.Abort()
			return
		}
	}
	query, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		// net/url would drop the malformed pair and answer as if it were not there.
		h.refuse(c, http.StatusBadRequest, "The query string is malformed.")
		return
	}
	for k, vs := range query {
		err := checkField(k, vs)
		if err == nil && (k == "starting_after" || k == "endpoint_id") && vs[0] != "" && !textcheck.IsID(vs[0]) {
			err = fmt.Errorf("%s is not an id.", k)
		}
		if err != nil {
			h.refuse(c, http.StatusBadRequest, "The query parameter "+err.Error())
			return
		}
	}
	for k, vs := range c.Request.PostForm {
		if err := checkField(k, vs); err != nil {
			h.formFault(c, k, "The field "+err.Error())
			c.Abort()
			return
		}
	}
	c.Next()
}

// checkField checks one name and its values; the error reads after "The field ".
func checkField(name string, values []string) error {
	if err := textcheck.Line(name); err != nil {
		return fmt.Errorf("name %s.", err)
	}
	// Every other field is one line: the endpoint form's signing choice too (a refusal
	// shows under its field, showEndpointFault).
	rule := textcheck.Line
	if name == "password" {
		rule = textcheck.Text // any character a password manager may produce, but no NUL
	}
	if name == "filter" {
		rule = textcheck.Text // an endpoint filter's JSON, typed over several lines
	}
	for _, v := range values {
		if err := rule(v); err != nil {
			return fmt.Errorf("%s %s.", name, err)
		}
	}
	return nil
}

// formFault shows a refused field on its own form where there is one to show again, and
// on the error page otherwise.
func (h *handler) formFault(c *gin.Context, param, msg string) {
	switch {
	case c.FullPath() == "/dashboard/login":
		h.showLogin(c, http.StatusBadRequest, printable(c.PostForm("email")), msg)
	case (c.FullPath() == "/dashboard/webhooks" || c.FullPath() == "/dashboard/webhooks/:id") && c.Request.Method == http.MethodPost:
		h.showEndpointFault(c, param, msg)
	default:
		h.render(c, http.StatusBadRequest, "error", view{Title: "Bad request", Error: msg})
	}
}

// refuse ends a request with an error page.
func (h *handler) refuse(c *gin.Context, status int, msg string) {
	if c.FullPath() == "/dashboard/login" {
		h.showLogin(c, status, "", msg)
	} else {
		h.render(c, status, "error", view{Title: http.StatusText(status), Error: msg})
	}
	c.Abort()
}

// printable is s made safe to show again in a form: invalid UTF-8 and control characters
// become U+FFFD, so the page shows where the fault is without carrying it.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
