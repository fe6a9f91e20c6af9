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
	if err == nil && tx.id != nil {
		tx.id.id = id
	}
	return id, err
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
