package config

import (
	"fmt"
	"strconv"
)

// Switch is an on/off setting that may also be left unset ("auto"), for Revops to decide
// at run time (REVOPS_SEAL_BOUND). As a flag value: "auto", or a boolean strconv reads.
type Switch struct {
	set, on bool
}

// On is a switch given on.
func On() Switch { return Switch{set: true, on: true} }

func (s *Switch) String() string {
	if s == nil || !s.set {
		return "auto"
	}
	return strconv.FormatBool(s.on)
}

// Set reads "auto" or a boolean.
func (s *Switch) Set(v string) error {
	if v == "auto" {
		*s = Switch{}
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true, false or auto")
	}
	*s = Switch{set: true, on: on}
	return nil
}

// IsBoolFlag lets the flag be given alone (--seal-bound means true).
func (s *Switch) IsBoolFlag() bool { return true }

// Value is the setting: nil when left to Revops.
func (s Switch) Value() *bool {
	if !s.set {
		return nil
	}
	return &s.on
}
