package api

import (
	"bytes"
	"encoding/json"

	"github.com/gin-gonic/gin"
)

// render answers with v as JSON. encoding/json (and so gin's c.JSON) escapes <, > and &
// as \u003c… for HTML pages; API clients read these bodies raw, where the escapes only
// garble messages such as "Bearer <API_KEY>", so every API answer goes through here.
func render(c *gin.Context, status int, v any) {
	b, err := marshalJSON(v)
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(status, "application/json; charset=utf-8", b)
}

// abortJSON is render for an answer that ends the request (errors).
func abortJSON(c *gin.Context, status int, v any) {
	c.Abort()
	render(c, status, v)
}

// marshalJSON is json.Marshal without HTML escaping.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
