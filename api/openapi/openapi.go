// Package openapi holds the OpenAPI 3.1 document of the /v1 API (CONTRACT §9), kept by
// hand in openapi.json next to this file and embedded in the binary. api's tests check
// it against the routes gin registers and validate real responses against its schemas.
package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed openapi.json
var raw []byte

// Raw returns the embedded document as written (servers holds a placeholder).
func Raw() []byte { return append([]byte(nil), raw...) }

// Document returns the document with servers set to the API's public base URL, so that
// clients generated from it call this installation.
func Document(publicURL string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode embedded OpenAPI document: %w", err)
	}
	servers, err := json.Marshal([]map[string]string{{"url": strings.TrimRight(publicURL, "/")}})
	if err != nil {
		return nil, fmt.Errorf("encode servers: %w", err)
	}
	doc["servers"] = servers
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode OpenAPI document: %w", err)
	}
	return out, nil
}
