package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrIntegrity means a fact that a grant relies on (the operator set,
// the newest rule for a pattern, the active epoch, the chain around
// them) is invalid or missing. Guard then refuses: it never falls back to
// an older fact that happens to verify, since removing the newest one is
// exactly what an agent that can write the file would try. It is a kind
// of ErrNotPermitted (exit 77): no valid authority allows this permit.
var ErrIntegrity = fmt.Errorf("%w: ledger integrity", ErrNotPermitted)

// integrityError names the fact that failed and why, for the operator
// who must repair or restore the ledger.
func integrityError(format string, args ...any) error {
	return fmt.Errorf("%w: %s; no permit is issued until an operator runs 'tollgate verify' and repairs or restores the ledger", ErrIntegrity, fmt.Sprintf(format, args...))
}

// evStatementsV2 marks, on a ledger upgraded to schema 8 while it held
// signatures, where statements of version 1 end: a v1 signature counts
// only for a fact committed before this event. A ledger created at
// schema 8 or later has none, and accepts no v1 signature.
const evStatementsV2 = "statements_v2"

// eventLinked reports whether the event at seq is part of the chain: its
// hash recomputes from its fields, its prev_hash is the hash of the event
// before it (the zero hash for the first), and the event after it names
// its hash (or, for the newest, the chain head row does). The registry
// is replayed only from events that pass this: an event inserted with a
// number of its own choosing (before the first registration, say) is not
// in the chain however its fields read.
func eventLinked(ctx context.Context, tx *Tx, seq int64) (bool, error) {
	evs, err := queryRows(ctx, tx, "SELECT "+eventCols+" FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq", []any{seq - 1, seq + 1},
		func(r *sql.Rows, x *linkedEvent) error {
			var err error
			x.detail, x.hv, err = scanEvent(r, &x.Event)
			return err
		})
	if err != nil {
		return false, err
	}
	var before, at, after *linkedEvent
	for i := range evs {
		switch evs[i].Seq {
		case seq - 1:
			before = &evs[i]
		case seq:
			at = &evs[i]
		case seq + 1:
			after = &evs[i]
		}
	}
	if at == nil || at.hash() != at.Hash {
		return false, nil
	}
	// A neighbour archived away is its run of pruned events (archive.go).
	var spanBefore, spanAfter sql.NullString
	if before == nil && seq > 1 {
		if err := tx.QueryRowContext(ctx, "SELECT last_hash FROM pruned_events WHERE last_seq = ?", seq-1).Scan(&spanBefore); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
	}
	if after == nil {
		if err := tx.QueryRowContext(ctx, "SELECT first_prev FROM pruned_events WHERE first_seq = ?", seq+1).Scan(&spanAfter); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
	}
	switch {
	case seq == 1 && at.PrevHash != zeroHash, seq > 1 && before != nil && before.Hash != at.PrevHash,
		seq > 1 && before == nil && (!spanBefore.Valid || spanBefore.String != at.PrevHash):
		return false, nil
	case after != nil:
		return after.PrevHash == at.Hash, nil
	case spanAfter.Valid:
		return spanAfter.String == at.Hash, nil
	}
	var head Head
	err = tx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&head.Seq, &head.Hash)
	if err != nil {
		return false, err
	}
	return head.Seq == seq && head.Hash == at.Hash, nil
}

// hashBeforeSQL and prevAfterSQL read, for an event e, the hash the
// chain holds just before it and the prev_hash just after it: an event's,
// or where that event was archived, its run of pruned events' (archive.go).
const (
	hashBeforeSQL = "coalesce((SELECT p.hash FROM events p WHERE p.seq = e.seq - 1), (SELECT s.last_hash FROM pruned_events s WHERE s.last_seq = e.seq - 1))"
	prevAfterSQL  = "coalesce((SELECT n.prev_hash FROM events n WHERE n.seq = e.seq + 1), (SELECT s.first_prev FROM pruned_events s WHERE s.first_seq = e.seq + 1))"
)

// eventLink is an event's columns as a query joined them (NULL when no
// event matched), for linked.
type eventLink struct {
	key, typ, actor, detail, prev, hash, ft, fr sql.NullString
	at, hv                                      sql.NullInt64
}

// linked is eventLinked for an event read with its neighbours' hashes
// (before: the hash of seq-1; after: the prev_hash of seq+1): only the
// newest event needs the head row.
func (l eventLink) linked(ctx context.Context, tx *Tx, seq int64, factSHA string, before, after sql.NullString) (bool, error) {
	if !l.hash.Valid {
		return false, nil
	}
	h := eventHash(int(l.hv.Int64), l.prev.String, seq, l.key.String, l.typ.String, l.actor.String, l.detail.String, l.at.Int64,
		factRef{Table: l.ft.String, Row: l.fr.String, SHA256: factSHA})
	switch {
	case h != l.hash.String:
		return false, nil
	case seq == 1 && l.prev.String != zeroHash, seq > 1 && (!before.Valid || before.String != l.prev.String):
		return false, nil
	case after.Valid:
		return after.String == l.hash.String, nil
	}
	var head Head
	if err := tx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&head.Seq, &head.Hash); err != nil {
		return false, err
	}
	return head.Seq == seq && head.Hash == l.hash.String, nil
}

type linkedEvent struct {
	Event
	detail string
	hv     int
}

func (e *linkedEvent) hash() string {
	return eventHash(e.hv, e.PrevHash, e.Seq, e.ActionKey, e.Type, e.Actor, e.detail, toMS(e.At),
		factRef{Table: e.FactTable, Row: e.FactRow, SHA256: e.FactSHA256})
}

// legacyThrough is the last event whose facts may carry version 1
// statements: the event before the schema 8 marker, or 0 when there is
// none (a ledger that had no signature when it was upgraded, or was
// created at schema 8). A marker that is not in the chain counts for
// nothing: then no v1 signature counts either, and guard fails closed.
func legacyThrough(ctx context.Context, tx *Tx) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, "SELECT seq FROM events WHERE fact_table = '' AND type = ? ORDER BY seq LIMIT 1", evStatementsV2).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ok, err := eventLinked(ctx, tx, seq)
	if err != nil || !ok {
		return 0, err
	}
	return seq - 1, nil
}
