package dashboard

import "testing"

// An alert's group shows its values as written, as a series' group does
// (firingGroupText): the stored JSON escapes <, > and & and quotes.
func TestAlertGroupText(t *testing.T) {
	for group, want := range map[string]string{
		`{}`:                                    "",
		`{"region":"eu"}`:                       "region=eu",
		`{"plan":"1","region":"\u003cé\u003e"}`: "plan=1, region=<é>",
		`{"region":"a \"quoted\" \u0026 b\\c"}`: `region=a "quoted" & b\c`,
	} {
		if got := alertGroupText(group); got != want {
			t.Errorf("alertGroupText(%s) = %q, want %q", group, got, want)
		}
	}
}
