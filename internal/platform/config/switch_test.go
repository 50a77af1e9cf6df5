package config

import (
	"strings"
	"testing"
)

// REVOPS_SEAL_BOUND (CONTRACT §25, rolling upgrades): unset is auto (nil: the store
// decides) but in dev, where it is on; true, false and auto are read from the variable or
// the flag, the flag winning; anything else is refused, naming the variable.
func TestSealBoundSetting(t *testing.T) {
	on, off := "true", "false"
	for _, tc := range []struct {
		name, mode, env string // env "" = unset
		args            []string
		want            *string // nil: auto
	}{
		{"api default", "api", "", nil, nil},
		{"migrate default", "migrate", "", nil, nil},
		{"dev default", "dev", "", nil, &on},
		{"dev variable false", "dev", "false", nil, &off},
		{"dev variable auto", "dev", "auto", nil, nil},
		{"worker variable 1", "worker", "1", nil, &on},
		{"migrate flag", "migrate", "", []string{"--seal-bound"}, &on},
		{"flag beats variable", "api", "true", []string{"--seal-bound=false"}, &off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(SealBoundEnv, tc.env)
			}
			c, err := load(t, tc.mode, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			got := c.SealBound.Value()
			if (got == nil) != (tc.want == nil) || got != nil && c.SealBound.String() != *tc.want {
				t.Errorf("SealBound = %s, want %v", c.SealBound.String(), tc.want)
			}
		})
	}
	t.Setenv(SealBoundEnv, "sometimes")
	if _, err := load(t, "api"); err == nil || !strings.Contains(err.Error(), SealBoundEnv) {
		t.Errorf("REVOPS_SEAL_BOUND=sometimes: %v", err)
	}
}
