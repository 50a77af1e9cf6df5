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

	"github.com/revops/revops/internal/apperr"
)

// MaxBodyBytes is the request size limit of CONTRACT §3.
const MaxBodyBytes = 1 << 20

// hasBody tells whether the client sent a request body.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && len(r.TransferEncoding) > 0)
}

// readBody checks content type (415) and size (413) and returns the raw body.
// A request without a body yields nil.
func readBody(c *gin.Context) ([]byte, error) {
	r := c.Request
	if !hasBody(r) {
		return nil, nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, apperr.Request(http.StatusUnsupportedMediaType, "unsupported_media_type", "",
			"Send JSON bodies with 'Content-Type: application/json'.")
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		return nil, apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "Could not read the request body.")
	}
	return body, nil
}

func tooLarge() error {
	return apperr.Request(http.StatusRequestEntityTooLarge, "request_too_large", "",
		"Request bodies are limited to 1 MiB.")
}

// bindJSON reads the body and decodes it strictly into dst: unknown fields, wrong types,
// trailing data and a missing body are all 400s with the field named.
func bindJSON(c *gin.Context, dst any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if body == nil {
		return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "A JSON request body is required.")
	}
	if err := checkStrings(body); err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// decodeStrict decodes one JSON value into dst, rejecting unknown fields.
func decodeStrict(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body holds more than one JSON value.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "Unexpected data after the JSON value.")
	}
	return nil
}

func jsonError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
	case errors.As(err, &typ):
		param := typ.Field
		if param == "" {
			return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
		}
		return &apperr.ValidationError{Faults: []apperr.Fault{{Param: param, Code: apperr.CodeParameterInvalid,
			Message: fmt.Sprintf("%s must be %s, not %s.", param, jsonKind(typ.Type.Kind().String()), typ.Value)}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &apperr.ValidationError{Faults: []apperr.Fault{{Param: name, Code: apperr.CodeUnknownParameter,
			Message: fmt.Sprintf("Unknown parameter %s.", name)}}}
	default:
		return apperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body is not valid JSON: %v", err)
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
