package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// zeroHash is the previous hash of the first event in a chain.
const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Event is one entry of the hash-chained event log.
type Event struct {
	Seq       int64          `json:"seq"`
	ActionKey string         `json:"key"`
	Type      string         `json:"type"`
	Actor     string         `json:"actor"`
	Detail    map[string]any `json:"detail,omitempty"`
	At        time.Time      `json:"at"`
	PrevHash  string         `json:"prev_hash"`
	Hash      string         `json:"hash"`
	// Fact names the row this event commits (table, row key and the
	// SHA-256 of its columns); empty for events written before schema 5
	// and for the few derived events.
	FactTable  string `json:"fact_table,omitempty"`
	FactRow    string `json:"fact_row,omitempty"`
	FactSHA256 string `json:"fact_sha256,omitempty"`
}

// eventHashV1 is the chain link of events written before schema 5: the
// previous hash and every field, separated by 0x1f.
func eventHashV1(prev string, seq int64, key, typ, actor, detail string, at int64) string {
	var b strings.Builder
	for i, f := range []string{prev, strconv.FormatInt(seq, 10), key, typ, actor, detail, strconv.FormatInt(at, 10)} {
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(f)
	}
	return sha256Hex([]byte(b.String()))
}

// eventHashV2 also covers the fact the event commits, and writes each
// field with its length, so no field's text can shift into another.
func eventHashV2(prev string, seq int64, key, typ, actor, detail string, at int64, f factRef) string {
	// One buffer, one hash: export and verify recompute every event.
	b := make([]byte, 0, 320+len(key)+len(actor)+len(detail))
	for _, s := range [...]string{"v2", prev, strconv.FormatInt(seq, 10), key, typ, actor, detail, strconv.FormatInt(at, 10), f.Table, f.Row, f.SHA256} {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// eventHash recomputes a stored event's hash by its version.
func eventHash(hv int, prev string, seq int64, key, typ, actor, detail string, at int64, f factRef) string {
	if hv == 1 {
		return eventHashV1(prev, seq, key, typ, actor, detail, at)
	}
	return eventHashV2(prev, seq, key, typ, actor, detail, at, f)
}

// appendEvent adds an event to the chain inside the caller's writing
// transaction, committing fact (nil for a derived event). The first
// append of a transaction reads the chain_head row, locked until commit
// on an engine that needs it (LockSuffix), so that reading the head and
// appending to it are one step with any number of writers; saveHead
// advances the row once, before commit.
func appendEvent(ctx context.Context, tx *Tx, key, typ, actor string, detail map[string]any, at int64, fact *factRef) error {
	d, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	if typ != evConflict {
		if err := othersKeyWrite(tx); err != nil {
			return err
		}
	}
	var seq int64
	prev := zeroHash
	switch {
	case tx.server && tx.keyLock != "":
		return holdEvent(tx, key, typ, actor, string(d), at, factOf(fact))
	case tx.server:
		// The database numbers, links and hashes the event and moves the
		// head in one call: no role writes the chain directly.
		var h Head
		err := tx.QueryRowContext(ctx, "SELECT o_seq, o_hash FROM tollgate_append_event(?, ?, ?, ?, ?, ?, ?, ?)",
			key, typ, actor, string(d), at, factOf(fact).Table, factOf(fact).Row, factOf(fact).SHA256).Scan(&h.Seq, &h.Hash)
		if err == nil {
			tx.head = &h
		}
		return err
	case tx.head != nil:
		seq, prev = tx.head.Seq, tx.head.Hash
	case tx.migrating:
		// Migration 5 appends before schema 7 made the head a row.
		err = tx.QueryRowContext(ctx, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&seq, &prev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	default:
		if err := lockHead(ctx, tx); err != nil {
			return err
		}
		seq, prev = tx.saved.Seq, tx.saved.Hash
	}
	seq++
	var f factRef
	if fact != nil {
		f = *fact
	}
	h := eventHashV2(prev, seq, key, typ, actor, string(d), at, f)
	_, err = tx.ExecContext(ctx, `INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 2)`, seq, key, typ, actor, string(d), at, prev, h, f.Table, f.Row, f.SHA256)
	if err == nil {
		tx.head = &Head{Seq: seq, Hash: h}
	}
	return err
}

// waitHead takes the chain head for a key transaction's events under the
// database's half-second bound (schema 30), so that an operator's
// decision blocked by a session holding the head names it instead of
// waiting out its attempt.
func waitHead(ctx context.Context, tx *Tx) error {
	if tx.keyLock == "" || len(tx.events) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT tollgate_wait_head()")
	return err
}

// heldEvent is an event of a key transaction, appended at its end.
type heldEvent struct {
	key, typ, actor, detail string
	at                      int64
	fact                    factRef
}

// holdEvent keeps a key transaction's event for flushEvents. An event of
// a key the transaction did not lock would be appended without the
// key's lock: refused, as a bug, before anything is written.
func holdEvent(tx *Tx, key, typ, actor, detail string, at int64, f factRef) error {
	// A signature's event names no key (its fact row says which); it
	// follows the key's own fact in the same transaction.
	if logicalOf(key) != tx.keyLock && (key != "" || typ != evSigned) {
		return fmt.Errorf("ledger: an event of key %s in a transaction that locked %s only", key, tx.keyLock)
	}
	tx.events = append(tx.events, heldEvent{key, typ, actor, detail, at, f})
	return nil
}

// logicalOf is the logical key a key transaction locks for key: every
// epoch of one action is one lock. A key that does not parse is its own.
func logicalOf(key string) string {
	if k, err := ParseKey(key); err == nil {
		return k.Logical
	}
	return key
}

// flushEvents appends a key transaction's events to the chain in one
// call (tollgate_append_events), which locks the chain head until the
// transaction ends: the last statement before COMMIT.
func flushEvents(ctx context.Context, tx *Tx) error {
	if len(tx.events) == 0 {
		return nil
	}
	var h Head
	err := tx.QueryRowContext(ctx, "SELECT o_seq, o_hash FROM tollgate_append_events(?, ?, ?, ?, ?, ?, ?, ?)",
		heldArrays(tx.events)...).Scan(&h.Seq, &h.Hash)
	if err != nil {
		return err
	}
	tx.events, tx.head = nil, &h
	return nil
}

// heldArrays is events as tollgate_append_events takes them: each field
// an array.
func heldArrays(events []heldEvent) []any {
	n := len(events)
	keys, typs, actors, details := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	tables, rows, shas := make([]string, n), make([]string, n), make([]string, n)
	ats := make([]int64, n)
	for i, e := range events {
		keys[i], typs[i], actors[i], details[i], ats[i] = e.key, e.typ, e.actor, e.detail, e.at
		tables[i], rows[i], shas[i] = e.fact.Table, e.fact.Row, e.fact.SHA256
	}
	return []any{keys, typs, actors, details, ats, tables, rows, shas}
}

// flushInOne is flushIndex and flushEvents (with waitHead first for a
// decision's events) in the one statement q (engine.OneCallFlusher), so
// that the chain head is held for that statement and the COMMIT only.
func flushInOne(ctx context.Context, tx *Tx, q string) error {
	if len(tx.events) == 0 && len(tx.dirty) == 0 {
		return nil
	}
	n := len(tx.events)
	moved := movedKeys(tx)
	targets := make([]*string, len(moved))
	for i, k := range moved {
		targets[i] = tx.dirty[k]
	}
	var seq sql.NullInt64
	var hash sql.NullString
	args := append(append([]any{tx.eventsFirst && tx.keyLock != ""}, heldArrays(tx.events)...), moved, targets)
	err := tx.QueryRowContext(ctx, q, args...).Scan(&seq, &hash)
	if err != nil {
		return err
	}
	// No head answered: an agent's role's events are committed pending
	// (PostgreSQL schema 39), sealed by the next writer that is not an
	// agent's; nothing of this transaction waits for the head.
	if n > 0 {
		tx.head = nil
		if seq.Valid {
			tx.head = &Head{Seq: seq.Int64, Hash: hash.String}
		}
	}
	tx.events, tx.dirty = nil, nil
	return nil
}

// factOf is the fact an event commits, empty for a derived event.
func factOf(fact *factRef) factRef {
	if fact == nil {
		return factRef{}
	}
	return *fact
}

// lockHead reads the chain_head row into tx.saved, once per transaction,
// locked until commit where the engine needs a lock (LockSuffix).
func lockHead(ctx context.Context, tx *Tx) error {
	if tx.saved != nil {
		return nil
	}
	var h Head
	q := "SELECT seq, hash FROM chain_head WHERE one = 1" + tx.lock
	if tx.server {
		q = "SELECT o_seq, o_hash FROM tollgate_lock_head()"
	}
	if err := tx.QueryRowContext(ctx, q).Scan(&h.Seq, &h.Hash); err != nil {
		return fmt.Errorf("read the chain head: %w", err)
	}
	tx.saved = &h
	return nil
}

// saveHead advances the chain_head row to the last event this
// transaction appended, if it appended any. The row's seq is compared
// with the one read: under the lock it cannot have moved, and if it
// somehow did, nothing of this transaction is kept.
func saveHead(ctx context.Context, tx *Tx) error {
	if tx.saved == nil || tx.head == nil || tx.server {
		return nil // nothing appended, or the database moved the head with each append
	}
	res, err := tx.ExecContext(ctx, "UPDATE chain_head SET seq = ?, hash = ? WHERE one = 1 AND seq = ?", tx.head.Seq, tx.head.Hash, tx.saved.Seq)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("the chain head moved from seq %d during this transaction; nothing was stored (%v)", tx.saved.Seq, err)
	}
	return nil
}

// Timeline returns every event of one key, oldest first.
func (s *Store) Timeline(ctx context.Context, key string) ([]Event, error) {
	var out []Event
	err := s.read(ctx, func(tx *Tx) error {
		var err error
		out, err = timeline(ctx, tx, key)
		return err
	})
	return out, err
}

const eventCols = "seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv"

// scanEvent reads eventCols; it returns the raw detail and hash version
// that verify needs to recompute the hash.
func scanEvent(sc interface{ Scan(...any) error }, e *Event) (detail string, hv int, err error) {
	var at int64
	if err = sc.Scan(&e.Seq, &e.ActionKey, &e.Type, &e.Actor, &detail, &at, &e.PrevHash, &e.Hash, &e.FactTable, &e.FactRow, &e.FactSHA256, &hv); err != nil {
		return "", 0, err
	}
	e.At = fromMS(at)
	return detail, hv, nil
}

func timeline(ctx context.Context, tx *Tx, key string) ([]Event, error) {
	return queryRows(ctx, tx, "SELECT "+eventCols+" FROM events WHERE action_key = ? ORDER BY seq", []any{key}, func(rows *sql.Rows, e *Event) error {
		d, _, err := scanEvent(rows, e)
		if err != nil {
			return err
		}
		// The detail is tollgate's own JSON; a row that does not parse is
		// shown without it, and verify names it by its hash.
		_ = json.Unmarshal([]byte(d), &e.Detail)
		return nil
	})
}
