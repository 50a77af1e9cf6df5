// Package orgs creates organizations with their first dashboard user, and reads them.
package orgs

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/mail"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Create validates the name and email, makes the organization with both environments and
// a user with a fresh random password, and returns that password (shown once).
func Create(ctx context.Context, st *store.Store, name, email string) (models.Organization, string, error) {
	var faults apperr.Faults
	name = strings.TrimSpace(name)
	if name == "" {
		faults.Missing("name")
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		faults.Invalid("email", "email %q is not a valid address.", email)
	}
	if err := faults.Err(); err != nil {
		return models.Organization{}, "", err
	}
	password := rand.Text()[:20]
	hash, err := HashPassword(password)
	if err != nil {
		return models.Organization{}, "", err
	}
	org, err := st.CreateOrganization(ctx, name, strings.ToLower(email), hash)
	if err != nil {
		return models.Organization{}, "", err
	}
	return org, password, nil
}

// HashPassword is bcrypt at the default cost.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// ResetPassword gives the user a new random password and returns it; the user's sessions
// end with the old password (CONTRACT §15).
func ResetPassword(ctx context.Context, st *store.Store, email string) (string, error) {
	u, err := st.UserByEmail(ctx, strings.ToLower(email))
	if err != nil {
		return "", err
	}
	password := rand.Text()[:20]
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	return password, st.ResetUserPassword(ctx, u.ID, hash)
}

// Reader reads organizations.
type Reader interface {
	Organization(ctx context.Context, id string) (models.Organization, error)
}

// Get reads one organization (GET /v1/whoami names the key's).
func Get(ctx context.Context, st Reader, id string) (models.Organization, error) {
	return st.Organization(ctx, id)
}
