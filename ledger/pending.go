package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// PostgreSQL's one-call guard (schema 16) commits its events pending:
// complete but for their number, previous hash and hash, which sealing
// gives them later, in batches, whoever holds the chain head next. A
// pending event commits its fact row as a sealed one does, so verify
// counts it, checks that its type commits its row's table, and cancels
// its fact hash against the row's (factSum) as it does a sealed event's.

// hasPending reports whether the ledger can hold pending events: a
// PostgreSQL ledger at schema 16 or later.
func hasPending(ctx context.Context, tx *Tx) (bool, error) {
	if !tx.onServer() {
		return false, nil
	}
	var ok bool
	err := tx.QueryRowContext(ctx, "SELECT to_regclass('public.pending_events') IS NOT NULL").Scan(&ok)
	return ok, err
}

// verifyPending checks the pending events of the transaction's snapshot
// (the chain walk's: a seal moves an event from one table to the other
// in one commit, so each is seen once) and reports how many there are
// and the age of the oldest.
func verifyPending(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	ok, err := hasPending(ctx, tx)
	if err != nil || !ok {
		return err
	}
	type pending struct {
		id                            int64
		key, typ, table, row, factSHA string
		at                            int64
	}
	evs, err := queryRows(ctx, tx, "SELECT id, action_key, type, at_ms, fact_table, fact_row, fact_sha256 FROM pending_events ORDER BY id", nil,
		func(r *sql.Rows, p *pending) error {
			return r.Scan(&p.id, &p.key, &p.typ, &p.at, &p.table, &p.row, &p.factSHA)
		})
	if err != nil {
		return err
	}
	for _, p := range evs {
		rep.Unsealed++
		if age := tx.now - p.at; age > rep.OldestUnsealedMS {
			rep.OldestUnsealedMS = age
		}
		row := fmt.Sprintf("id=%d", p.id)
		t := factTableNamed(p.table)
		switch {
		case p.table == "" && !factlessEvents[p.typ]:
			rep.add("pending_events", row, p.key, "a %s event must commit a fact row and commits none", p.typ)
		case p.table != "" && (t == nil || !slices.Contains(t.events, p.typ)):
			rep.add("pending_events", row, p.key, "a %s event cannot commit a row of %q", p.typ, p.table)
		}
		if t != nil && rep.facts != nil && rep.hidden[t.name] == "" {
			key := ""
			if t.keyCol != "" {
				key = p.key
			}
			rep.facts.event(t.name, p.row, p.factSHA, key)
		}
	}
	return nil
}

// eventsAndPending is the events verify joins fact rows to: the chain's,
// and on a ledger with pending events those too, numbered by their
// pending id negated (no sealed event has a number below 1).
func eventsAndPending(ctx context.Context, tx *Tx) (string, error) {
	ok, err := hasPending(ctx, tx)
	if err != nil || !ok {
		return "events", err
	}
	return "(SELECT seq, action_key, fact_table, fact_row, fact_sha256 FROM events UNION ALL " +
		"SELECT -id, action_key, fact_table, fact_row, fact_sha256 FROM pending_events)", nil
}
