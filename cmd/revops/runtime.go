package main

import (
	"flag"
	"net"

	"github.com/revops/revops/internal/platform/config"
)

// loadConfig parses a command's flags (fs may hold command-specific ones).
func loadConfig(fs *flag.FlagSet, mode string, args []string) (config.Config, error) {
	return config.Load(fs, mode, args)
}

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("revops "+name, flag.ContinueOnError)
}

// isLoopback tells whether a listen address only accepts local connections.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
