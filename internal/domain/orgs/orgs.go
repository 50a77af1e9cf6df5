// Package orgs creates organizations with their first dashboard user, and reads them.
// Every write is one transaction of the organization (store.OrgScope).
package orgs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what orgs need of the database.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	UserByEmail(ctx context.Context, email string) (models.OrganizationUser, error)
	User(ctx context.Context, id string) (models.OrganizationUser, error)
}

var _ Store = (*store.Store)(nil)

// Create validates the name and email, makes the organization with both environments and
// a user with a fresh random password, and returns that password (shown once).
func Create(ctx context.Context, st Store, name, email string) (models.Organization, string, error) {
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
	org, err := CreateWithHash(ctx, st, name, strings.ToLower(email), hash)
	if err != nil {
		return models.Organization{}, "", err
	}
	return org, password, nil
}

// CreateWithHash writes an organization, its two environments and its first user, whose
// password hash is given, in one transaction: Create's write, as it is (no check of the
// name or the email), for the tools and tests that bring a hash of their own. An email
// another user has is a conflict, email_taken.
func CreateWithHash(ctx context.Context, st Store, name, email, passwordHash string) (models.Organization, error) {
	now := time.Now().UTC()
	org := models.Organization{Name: name, CreatedAt: now}
	_, err := st.InTx(ctx, store.OrgScope(uuid.NewString()), func(tx *store.Tx) error {
		if err := tx.InsertOrganization(&org); err != nil {
			return err
		}
		for _, env := range []string{models.EnvLive, models.EnvSandbox} {
			if err := tx.InsertEnvironment(&models.Environment{ID: uuid.NewString(), Name: env, CreatedAt: now}); err != nil {
				return err
			}
		}
		err := tx.InsertUser(&models.OrganizationUser{ID: uuid.NewString(), Email: email, PasswordHash: passwordHash, CreatedAt: now})
		if errors.Is(err, store.ErrEmailTaken) {
			return apperr.Conflict("email_taken", "a user with email %s already exists", email)
		}
		return err
	})
	return org, err
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
func ResetPassword(ctx context.Context, st Store, email string) (string, error) {
	u, err := st.UserByEmail(ctx, strings.ToLower(email))
	if err != nil {
		return "", err
	}
	password := rand.Text()[:20]
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	return password, SetPassword(ctx, st, u.ID, hash)
}

// SetPassword replaces the password hash of user id and, in the same transaction, ends
// every session of the user: whoever knew the old password (or held a session opened
// with it) is out as soon as the new one exists. The browsers the user signed in on are
// forgotten too: one that signed in with the old password is a stranger again.
func SetPassword(ctx context.Context, st Store, id, passwordHash string) error {
	u, err := st.User(ctx, id) // its organization: the transaction's
	if err != nil {
		return err
	}
	_, err = st.InTx(ctx, store.OrgScope(u.OrganizationID), func(tx *store.Tx) error {
		if err := tx.SetUserPassword(u.ID, passwordHash); err != nil {
			return err
		}
		if err := tx.EndUserSessions(u.ID); err != nil {
			return err
		}
		return tx.ForgetUserDevices(u.ID)
	})
	return err
}

// Reader reads organizations.
type Reader interface {
	Organization(ctx context.Context, id string) (models.Organization, error)
}

// Get reads one organization (GET /v1/whoami names the key's).
func Get(ctx context.Context, st Reader, id string) (models.Organization, error) {
	return st.Organization(ctx, id)
}
