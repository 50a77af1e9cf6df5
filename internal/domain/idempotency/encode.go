package idempotency

import (
	"bytes"
	"encoding/json"
)

// Marshal is the JSON of every API answer: encoding/json without HTML escaping and
// without the trailing newline. The escapes of <, > and & (\u003c…) serve HTML pages;
// API clients read these bodies raw, where they only garble messages such as
// "Bearer <API_KEY>". A kept answer is rendered by it too, so that the first answer and
// its replays are the same bytes. JSON already rendered by it (json.RawMessage, such as
// usage's stored receipt on the ingest path) is the answer as it is, not scanned again.
func Marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
