package redact

import "testing"

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://hooks.example.com/revops", "https://hooks.example.com/revops"},
		{"https://hooks.example.com/revops?token=s3cret&team=42", "https://hooks.example.com/revops?token=<redacted>&team=<redacted>"},
		{"https://user:pa55@hooks.example.com:8443/in?x", "https://<redacted>@hooks.example.com:8443/in?<redacted>"},
		{"https://apikey@hooks.example.com/", "https://<redacted>@hooks.example.com/"},
		{"https://hooks.example.com/in?a=1&&b=&c", "https://hooks.example.com/in?a=<redacted>&&b=<redacted>&<redacted>"},
		{"https://hooks.example.com/in?t=%2Fs3cret#frag-s3cret", "https://hooks.example.com/in?t=<redacted>"},
		{"https://hooks.example.com/in?", "https://hooks.example.com/in?"},
		{"https://[2001:db8::1]/in?k=v", "https://[2001:db8::1]/in?k=<redacted>"},
		{"://bad", ""},
	} {
		got := URL(tc.in)
		if got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := URL(got); got != "" && again != got {
			t.Errorf("URL(URL(%q)) = %q: not idempotent", tc.in, again)
		}
	}
}
