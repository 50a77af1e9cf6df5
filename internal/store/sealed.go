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
// sealer in the statement's context, which the serializer reads: a statement on any
// other *gorm.DB has no keyring and cannot write a secret (never in clear by accident).
//
// Each value is bound to its place (sealed_place.go): the table and column of the model
// that declares the field, and the id of its row, read from the struct being written or
// scanned. So the row's id is set before a sealed field is written (ids are made in Go,
// before the insert) and is read before it (selected first: every table keeps id as its
// first column, and a Select naming a sealed column names id before it).

func init() {
	schema.RegisterSerializer("sealed", sealedSerializer{})
}

// SealError is a sealed field that could not be sealed or opened. It names the place
// (table, column, row id) and key ids, never a key, the plaintext or the sealed text;
// dbError returns it alone, as the driver's own message around it may show the value it
// was given (pgx does).
type SealError struct {
	at  string // the place, or the field when its place is unknown
	err error
}

func (e *SealError) Error() string { return "sealed " + e.at + ": " + e.err.Error() }
func (e *SealError) Unwrap() error { return e.err }

func sealErr(field *schema.Field, format string, args ...any) error {
	return &SealError{at: "field " + field.Name, err: fmt.Errorf(format, args...)}
}

// sealErrAt is err of field in row, named by its place where its row's id is known.
func sealErrAt(ctx context.Context, field *schema.Field, row reflect.Value, err error) error {
	at, perr := placeOf(ctx, field, row)
	if perr != nil {
		return sealErr(field, "%w", err)
	}
	return &SealError{at: at.String(), err: err}
}

// sealer is what a store's statements seal with: its keys, and the form it writes.
type sealer struct {
	kr *secretbox.Keyring
	// bound: write the bound form; else the unbound one the release before reads. Set
	// once, while the store opens (sealsBound), before any statement that seals.
	bound bool
}

// keyringKey keys the store's sealer in a statement's context.
type keyringKey struct{}

// errNoStoreKeyring: a sealed field met a statement that did not run on a store's
// database (no keyring in its context).
var errNoStoreKeyring = errors.New("sealed field outside a store statement: no keyring")

// withKeyring makes every statement on db carry sl (whose keyring nil: the store has no
// keys, and sealed fields can only be read while clear, and written empty).
func withKeyring(db *gorm.DB, sl *sealer) error {
	put := func(db *gorm.DB) {
		ctx := db.Statement.Context
		if ctx == nil {
			ctx = context.Background()
		}
		db.Statement.Context = context.WithValue(ctx, keyringKey{}, sl)
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

// sealerOf is the sealer of the store that runs the statement.
func sealerOf(ctx context.Context) (*sealer, error) {
	if ctx == nil {
		return nil, errNoStoreKeyring
	}
	sl, ok := ctx.Value(keyringKey{}).(*sealer)
	if !ok {
		return nil, errNoStoreKeyring
	}
	return sl, nil
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
		sl, err := sealerOf(ctx)
		if err != nil {
			return sealErr(field, "%w", err)
		}
		// The unbound form opens anywhere: its place is needed (and read) for the bound one.
		var at secretbox.Place
		if secretbox.IsBound(stored) {
			if at, err = placeOf(ctx, field, dst); err != nil {
				return err
			}
		}
		if plain, err = sl.kr.Open(stored, at); err != nil {
			return sealErrAt(ctx, field, dst, err)
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

// Value seals the field's value under the first key, in the store's form; "" (and an
// empty map) is stored "": nothing to hide, and nothing to re-seal when keys rotate.
func (sealedSerializer) Value(ctx context.Context, field *schema.Field, dst reflect.Value, fieldValue any) (any, error) {
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
	sl, err := sealerOf(ctx)
	if err != nil {
		return nil, sealErr(field, "%w", err)
	}
	// The place is read in either form, so that a write without its row's id fails
	// before the switch as after it.
	at, err := placeOf(ctx, field, dst)
	if err != nil {
		return nil, err
	}
	sealed, err := sl.kr.SealUnbound(plain)
	if sl.bound {
		sealed, err = sl.kr.Seal(plain, at)
	}
	if err != nil {
		return nil, &SealError{at: at.String(), err: err}
	}
	return sealed, nil
}
