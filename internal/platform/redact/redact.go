// Package redact hides what a webhook receiver's URL may carry for it alone (CONTRACT
// §13, §25): credentials in its user information and tokens in its query. An endpoint's
// own reads show its URL as saved; every other place that names the URL (attempt
// records and their reads, logs, traces) shows it through URL.
package redact

import (
	"net/url"
	"strings"
)

// Placeholder stands for a hidden value, as custom header values are shown (§25).
const Placeholder = "<redacted>"

// URL is raw with its user information and every query value replaced by Placeholder
// (the query's names stay: they tell which parameters were sent, not what they hold; a
// part without "=" may be a token itself, and is hidden whole) and without its fragment,
// which is never sent. It is idempotent, so a URL recorded masked reads back the same;
// a URL that does not parse is "".
func URL(raw string) string {
	raw, masked := withoutMaskedUser(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	creds := masked || u.User != nil
	u.User, u.Fragment, u.RawFragment = nil, "", ""
	u.RawQuery = query(u.RawQuery)
	s := u.String()
	if creds {
		s = strings.Replace(s, "//", "//"+Placeholder+"@", 1)
	}
	return s
}

// withoutMaskedUser is raw without the masked user information URL writes (which does not
// parse: "<" has no place there), and whether it had one.
func withoutMaskedUser(raw string) (string, bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if after, masked := strings.CutPrefix(rest, Placeholder+"@"); ok && masked {
		return scheme + "://" + after, true
	}
	return raw, false
}

// query is a raw query with each value replaced by Placeholder.
func query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		switch {
		case hasValue:
			parts[i] = name + "=" + Placeholder
		case p != "":
			parts[i] = Placeholder
		}
	}
	return strings.Join(parts, "&")
}
