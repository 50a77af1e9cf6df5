package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
)

// fieldRules says which members of a request object a caller may send (bodyfields.Rules,
// shared with the domain decoders that read raw bodies).
type fieldRules = bodyfields.Rules

// bindObject reads a JSON object body, refuses read-only and unknown members (all of
// them listed), then decodes it strictly into dst.
func bindObject(c *gin.Context, rules fieldRules, dst any) error {
	body, err := requiredBody(c)
	if err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := decodeStrict(body, &raw); err != nil {
		return err
	}
	if raw == nil {
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	var fs apperr.Faults
	rules.Check(&fs, "", raw)
	if err := fs.Err(); err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// bindNoParams accepts an action request with no body or an empty JSON object.
func bindNoParams(c *gin.Context) error {
	var none struct{}
	return bindOptionalJSON(c, &none)
}
