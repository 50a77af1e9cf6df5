package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/revops/revops/internal/platform/secretbox"
)

// The two forms of a sealed value (secretbox.Place): bound to its row, or unbound (the
// release before). A process of this release opens both and writes one, decided when its
// store opens; this file decides it and finds the values of either form (CONTRACT §25,
// rolling upgrades: expand, then contract).

// boundLike matches a value sealed in the bound form under any key ('_' is one character
// in LIKE: the key id's).
var boundLike = secretbox.Prefix + strings.Repeat("_", secretbox.IDLen) + ":" + secretbox.BoundMark + "%"

// SealsBound tells whether the store writes secrets bound to their row.
func (s *Store) SealsBound() bool { return s.seal.bound }

// sealsBound decides the form the store writes: the setting (REVOPS_SEAL_BOUND) when it
// is given; else bound when the database keeps no secret unbound or in clear. Such a
// database keeps no secret yet (a new deployment: every process runs this release), or
// only bound ones (the switch was made and `revops migrate` has moved the rest, so no
// process of the release before can read them anyway); one that keeps secrets of the
// release before may be read by its processes still, until the operator says they are
// gone. A database migrated before the sealed columns existed keeps none in them.
func (s *Store) sealsBound(ctx context.Context, setting *bool) (bool, error) {
	if setting != nil {
		return *setting, nil
	}
	var conds []string
	var args []any
	m := s.db.WithContext(ctx).Migrator()
	if !m.HasTable("webhook_endpoints") {
		return true, nil
	}
	for _, c := range sealedColumns() {
		if m.HasColumn("webhook_endpoints", c) {
			conds = append(conds, "("+c+" NOT IN "+emptySealed+" AND "+c+" NOT LIKE ?)")
			args = append(args, boundLike)
		}
	}
	if len(conds) == 0 {
		return true, nil
	}
	var ids []string
	if err := s.db.WithContext(ctx).Raw(`SELECT id FROM webhook_endpoints WHERE `+strings.Join(conds, " OR ")+` LIMIT 1`, args...).
		Scan(&ids).Error; err != nil {
		return false, fmt.Errorf("secrets kept in the unbound form: %w", err)
	}
	return len(ids) == 0, nil
}

// staleSealed is the condition of an endpoint holding a secret Reseal rewrites: in clear,
// under a key but the current one, or (when the store writes the bound form) unbound.
func (s *Store) staleSealed() (string, []any) {
	current := secretbox.Prefix + s.keyring.Current() + ":"
	if s.seal.bound {
		current += secretbox.BoundMark
	}
	var conds []string
	var args []any
	for _, c := range sealedColumns() {
		conds = append(conds, "("+c+" NOT IN "+emptySealed+" AND "+c+" NOT LIKE ?)")
		args = append(args, current+"%")
	}
	return strings.Join(conds, " OR "), args
}
