package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"gorm.io/gorm/schema"

	"github.com/revops/revops/internal/platform/secretbox"
)

// declared is where a model keeps a sealed field: the model's table, the field's column
// and the name of the model's primary key field. It is read from the model that declares
// the field, not from a struct embedding it, so that a raw join scanning the endpoint
// under a prefix (deliveries_target.go's "ep_secret") binds and opens as the model does.
type declared struct {
	table, column, idName string
}

// declaredOf caches declared by model type and field name (a few sealed fields).
var declaredOf sync.Map

func declaredAt(model reflect.Type, fieldName string) (declared, error) {
	type key struct {
		model reflect.Type
		field string
	}
	if d, ok := declaredOf.Load(key{model, fieldName}); ok {
		return d.(declared), nil
	}
	sch := modelSchema(reflect.New(model).Interface())
	f, pk := sch.LookUpField(fieldName), sch.PrioritizedPrimaryField
	if f == nil || f.DBName == "" || pk == nil {
		return declared{}, fmt.Errorf("model %s keeps %s in no column of a table with one primary key", model, fieldName)
	}
	d := declared{table: sch.Table, column: f.DBName, idName: pk.Name}
	declaredOf.Store(key{model, fieldName}, d)
	return d, nil
}

// errNoRowID: a sealed field written or read where its row's id is not known.
var errNoRowID = errors.New("its row's id is not set: write a row with its id, and select id before a sealed column")

// placeOf is the place of the sealed field in row (the struct written or scanned): the
// table and column of the model declaring the field, and the id of that model's row,
// read from the id field beside it (the same embedding).
func placeOf(ctx context.Context, field *schema.Field, row reflect.Value) (secretbox.Place, error) {
	owner := field.Schema
	if field.OwnerSchema != nil {
		owner = field.OwnerSchema
	}
	d, err := declaredAt(owner.ModelType, field.Name)
	if err != nil {
		return secretbox.Place{}, sealErr(field, "%w", err)
	}
	at := secretbox.Place{Table: d.table, Column: d.column}
	idPath := append(slices.Clone(field.BindNames[:len(field.BindNames)-1]), d.idName)
	for _, f := range field.Schema.Fields {
		if !slices.Equal(f.BindNames, idPath) {
			continue
		}
		if id := reflect.Indirect(f.ReflectValueOf(ctx, row)); id.Kind() == reflect.String {
			at.Row = id.String()
		}
		break
	}
	if at.Row == "" {
		return at, &SealError{at: at.Table + "." + at.Column, err: errNoRowID}
	}
	return at, nil
}
