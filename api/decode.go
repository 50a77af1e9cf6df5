package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/platform/apperr"
)

// MaxBodyBytes is the request size limit of CONTRACT §3.
const MaxBodyBytes = 1 << 20

// readBody checks content type (415) and size (413) and returns the raw body.
// A request without a body yields nil.
func readBody(c *gin.Context) ([]byte, error) {
	if body, ok := bodyOf(c); ok { // read by a middleware (idempotent)
		return body, nil
	}
	r := c.Request
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > MaxBodyBytes {
		if err := checkContentType(r); err != nil {
			return nil, err
		}
		return nil, tooLarge()
	}
	// A length of -1 says only that the client did not announce one: chunked over
	// HTTP/1.1, or any HTTP/2 request without Content-Length (HTTP/2 has no
	// Transfer-Encoding). Whether there is a body is what the stream holds.
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, r.Body, MaxBodyBytes))
	if err == nil && len(body) == 0 {
		return nil, nil
	}
	if err := checkContentType(r); err != nil {
		return nil, err
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		return nil, httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "Could not read the request body.")
	}
	return body, nil
}

// checkContentType refuses a body that is not sent as JSON (415).
func checkContentType(r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return httperr.Request(http.StatusUnsupportedMediaType, "unsupported_media_type", "",
			"Send JSON bodies with 'Content-Type: application/json'.")
	}
	return nil
}

func tooLarge() error {
	return httperr.Request(http.StatusRequestEntityTooLarge, "request_too_large", "",
		"Request bodies are limited to 1 MiB.")
}

// bindJSON reads the body and decodes it strictly into dst: unknown fields, wrong types,
// trailing data and a missing body are all 400s with the field named.
func bindJSON(c *gin.Context, dst any) error {
	body, err := requiredBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// requiredBody reads a body that must be there and applies the checks every body gets
// (checkBody): what is left is the decoder's, the API's own (decodeStrict) or a domain
// decoder that lists every fault of a body at once (meters.DecodeCreate).
func requiredBody(c *gin.Context) ([]byte, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "A JSON request body is required.")
	}
	if err := checkBody(body); err != nil {
		return nil, err
	}
	return body, nil
}

// bindOptionalJSON is bindJSON for a body that may be absent (dst left as it is).
func bindOptionalJSON(c *gin.Context, dst any) error {
	body, err := readBody(c)
	if err != nil || body == nil {
		return err
	}
	if err := checkBody(body); err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// maxNesting is how deep objects and arrays may nest in a request body of the API's own
// routes. Their bodies nest at most a few levels (deal → skus → item); the limit keeps
// every walk over a body (strings, fields, decoding) linear in its size with a small
// stack, where encoding/json alone would accept 10,000 levels.
const maxNesting = 64

// checkBody applies the rules of CONTRACT §15 that decoding does not: nesting, then
// strings.
func checkBody(body []byte) error {
	if err := checkNesting(body); err != nil {
		return err
	}
	if string(bytes.TrimSpace(body)) == "null" {
		// Decoding null into a struct leaves it untouched: an action would run as if
		// the body were {}.
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	return checkStrings(body)
}

// checkNesting refuses a body nested deeper than maxNesting, in one pass over its bytes
// (brackets inside strings do not count). Malformed JSON is left to decodeStrict.
func checkNesting(body []byte) error {
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped byte cannot end the string
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > maxNesting {
				return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "",
					"The body is nested too deeply: at most %d levels of objects and arrays.", maxNesting)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// decodeStrict decodes one JSON value into dst, rejecting unknown fields.
func decodeStrict(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, body)
	}
	if dec.More() {
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body holds more than one JSON value.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "Unexpected data after the JSON value.")
	}
	return nil
}

func jsonError(err error, body []byte) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
	case errors.As(err, &typ):
		param := typ.Field
		if param == "" {
			return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
		}
		if at := paramAt(body, param, typ.Value); at != "" {
			param = at // with the array indexes the decoder's Field leaves out
		}
		return &apperr.ValidationError{Faults: []apperr.Fault{{Param: param, Code: apperr.CodeParameterInvalid,
			Message: fmt.Sprintf("%s must be %s, not %s.", param, jsonKind(typ.Type.Kind().String()), typ.Value)}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &apperr.ValidationError{Faults: []apperr.Fault{{Param: name, Code: apperr.CodeUnknownParameter,
			Message: fmt.Sprintf("Unknown parameter %s.", name)}}}
	default:
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body is not valid JSON: %v", err)
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "int", "int64", "float64", "int32", "uint", "uint64":
		return "a number"
	}
	return "of another type"
}
