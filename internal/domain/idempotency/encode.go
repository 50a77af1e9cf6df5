package idempotency

import (
	"bytes"
	"encoding/json"
)

// Marshal is the JSON of every API answer: encoding/json without HTML escaping and
// without the trailing newline. The escapes of <, > and & (\u003c…) serve HTML pages;
// API clients read these bodies raw, where they only garble messages such as
// "Bearer <API_KEY>". A kept answer is rendered by it too, so that the first answer and
// its replays are the same bytes.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
