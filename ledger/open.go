package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ledgerID is the ledger's identity, fixed at creation.
func ledgerID(ctx context.Context, tx *Tx) (string, error) {
	if tx.id != nil {
		tx.id.mu.Lock()
		defer tx.id.mu.Unlock()
		if tx.id.id != "" {
			return tx.id.id, nil
		}
	}
	var id string
	err := tx.QueryRowContext(ctx, "SELECT ledger_id FROM ledger_meta").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: the ledger has no identity row (ledger_meta is empty)", ErrNotLedger)
	}
	if err == nil && !canonicalUUID(id) {
		// The id is what a witness names the ledger by, on one line of a
		// shared file: an id of any other shape (a 70,000-character one
		// made a line no reader took) is an edit, never tollgate's.
		return "", fmt.Errorf("%w: the ledger's id (ledger_meta.ledger_id, %d bytes) breaks the rule that it is a canonical UUID (36 characters of lowercase hex and hyphens, as tollgate writes it): the file was edited, and tollgate neither grants from nor witnesses it", ErrIntegrity, len(id))
	}
	if err == nil && tx.id != nil {
		tx.id.id = id
	}
	return id, err
}

// canonicalUUID reports whether s is a UUID as newUUID writes it.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case (c < '0' || c > '9') && (c < 'a' || c > 'f'):
			return false
		}
	}
	return true
}

// sealAndIdentify is migration 5's step in Go: it seals every fact row
// written before events committed their rows, then gives the ledger its
// identity, as a fact of its own.
func sealAndIdentify(ctx context.Context, tx *Tx, now int64) error {
	if err := sealFacts(ctx, tx, now); err != nil {
		return err
	}
	id := newUUID()
	ref, err := insertFact(ctx, tx, "ledger_meta", "one, ledger_id, created_ms", 1, id, now)
	if err != nil {
		return err
	}
	return appendEvent(ctx, tx, "", evLedgerCreated, "tollgate", map[string]any{"ledger_id": id}, now, &ref)
}
