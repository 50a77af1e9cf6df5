package config

// Test-only helpers, compiled into this package's tests alone.

import "sort"

// EnvVars lists every REVOPS_* variable the binary reads.
func EnvVars() []string {
	vars := make([]string, 0, len(envOf)+1)
	for _, v := range envOf {
		vars = append(vars, v)
	}
	vars = append(vars, EncryptionKeysEnv)
	sort.Strings(vars)
	return vars
}
