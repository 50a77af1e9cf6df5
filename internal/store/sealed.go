package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/revops/revops/internal/platform/secretbox"
)

// Secrets at rest (CONTRACT §25): a model field tagged `gorm:"serializer:sealed"` (a
// string, or a map[string]string kept as JSON) is sealed with the store's keyring on
// every write and opened on every read, whatever the statement (Create, UpdateColumns,
// Find, Raw(…).Scan into a struct embedding the model). Serializers are global in GORM,
// but each store's *gorm.DB runs a callback before every statement that puts its
// keyring in the statement's context, which the serializer reads: a statement on any
// other *gorm.DB has no keyring and cannot write a secret (never in clear by accident).

func init() {
	schema.RegisterSerializer("sealed", sealedSerializer{})
}

// SealError is a sealed field that could not be sealed or opened. It names the field
// and key ids, never a key or the plaintext; dbError returns it alone, as the driver's
// own message around it may show the value it was given (pgx does).
type SealError struct {
	field string
	err   error
}

func (e *SealError) Error() string { return "sealed field " + e.field + ": " + e.err.Error() }
func (e *SealError) Unwrap() error { return e.err }

func sealErr(field *schema.Field, format string, args ...any) error {
	return &SealError{field: field.Name, err: fmt.Errorf(format, args...)}
}

// keyringKey keys the store's keyring in a statement's context.
type keyringKey struct{}

// errNoStoreKeyring: a sealed field met a statement that did not run on a store's
// database (no keyring in its context).
var errNoStoreKeyring = errors.New("sealed field outside a store statement: no keyring")

// withKeyring makes every statement on db carry kr (nil: the store has no keys, and
// sealed fields can only be read while clear, and written empty).
func withKeyring(db *gorm.DB, kr *secretbox.Keyring) error {
	put := func(db *gorm.DB) {
		ctx := db.Statement.Context
		if ctx == nil {
			ctx = context.Background()
		}
		db.Statement.Context = context.WithValue(ctx, keyringKey{}, kr)
	}
	cb := db.Callback()
	for name, reg := range map[string]func(string, func(*gorm.DB)) error{
		"create": cb.Create().Before("*").Register,
		"query":  cb.Query().Before("*").Register,
		"update": cb.Update().Before("*").Register,
		"delete": cb.Delete().Before("*").Register,
		"row":    cb.Row().Before("*").Register,
		"raw":    cb.Raw().Before("*").Register,
	} {
		if err := reg("revops:keyring", put); err != nil {
			return fmt.Errorf("register keyring on %s: %w", name, err)
		}
	}
	return nil
}

// keyringOf is the keyring of the store that runs the statement.
func keyringOf(ctx context.Context) (*secretbox.Keyring, error) {
	if ctx == nil {
		return nil, errNoStoreKeyring
	}
	kr, ok := ctx.Value(keyringKey{}).(*secretbox.Keyring)
	if !ok {
		return nil, errNoStoreKeyring
	}
	return kr, nil
}

type sealedSerializer struct{}

// Scan opens the stored value (a clear one, stored before encryption, is read as it is).
func (sealedSerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	var stored string
	switch v := dbValue.(type) {
	case nil:
	case string:
		stored = v
	case []byte:
		stored = string(v)
	default:
		return sealErr(field, "stored as %T, want text", dbValue)
	}
	plain := stored
	if secretbox.IsSealed(stored) {
		kr, err := keyringOf(ctx)
		if err != nil {
			return sealErr(field, "%w", err)
		}
		if plain, err = kr.Open(stored); err != nil {
			return sealErr(field, "%w", err)
		}
	}
	value := reflect.New(field.FieldType)
	switch p := value.Interface().(type) {
	case *string:
		*p = plain
	case *map[string]string:
		if plain != "" {
			if err := json.Unmarshal([]byte(plain), p); err != nil {
				// json's error would quote the plaintext.
				return sealErr(field, "stored map is not a JSON object")
			}
		}
	default:
		return sealErr(field, "type %s cannot be sealed (string or map[string]string)", field.FieldType)
	}
	field.ReflectValueOf(ctx, dst).Set(value.Elem())
	return nil
}

// Value seals the field's value under the first key; "" (and an empty map) is stored
// "": nothing to hide, and nothing to re-seal when keys rotate.
func (sealedSerializer) Value(ctx context.Context, field *schema.Field, _ reflect.Value, fieldValue any) (any, error) {
	var plain string
	switch v := fieldValue.(type) {
	case string:
		plain = v
	case map[string]string:
		if len(v) > 0 {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, sealErr(field, "%w", err)
			}
			plain = string(b)
		}
	default:
		return nil, sealErr(field, "type %T cannot be sealed (string or map[string]string)", fieldValue)
	}
	if plain == "" {
		return "", nil
	}
	kr, err := keyringOf(ctx)
	if err != nil {
		return nil, sealErr(field, "%w", err)
	}
	sealed, err := kr.Seal(plain)
	if err != nil {
		return nil, sealErr(field, "%w", err)
	}
	return sealed, nil
}
