package keys

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/apperr"
)

// A negative expiry is refused before the store is read: the caller is told which
// parameter to change, and no status is chosen here (the edge answers 400).
func TestRollRefusesNegativeExpiry(t *testing.T) {
	_, err := NewManager(nil).Roll(context.Background(), "org", "key", -time.Second)
	var ie *apperr.InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNegativeExpiry) ||
		ie.Code != apperr.CodeParameterInvalid || ie.Param != "expires_in" || ie.Message != "expires_in must not be negative" {
		t.Fatalf("got %#v", err)
	}
}
