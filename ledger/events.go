package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// zeroHash is the previous hash of the first event in a chain.
const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Event is one entry of the hash-chained event log.
type Event struct {
	Seq       int64
	ActionKey string
	Type      string
	Actor     string
	Detail    map[string]any
	At        int64 // unix milliseconds
	PrevHash  string
	Hash      string
}

// eventHash is the chain link: it covers the previous hash and every field
// of the event, separated by a byte that cannot occur in keys, types or
// canonical JSON detail, so that two different events never hash alike.
func eventHash(prev string, seq int64, key, typ, actor, detail string, at int64) string {
	var b strings.Builder
	for i, f := range []string{prev, strconv.FormatInt(seq, 10), key, typ, actor, detail, strconv.FormatInt(at, 10)} {
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(f)
	}
	return sha256Hex([]byte(b.String()))
}

// appendEvent adds an event to the chain inside the caller's immediate
// transaction; holding the write lock is what makes reading the chain's
// head and appending to it one step.
func appendEvent(ctx context.Context, tx *Tx, key, typ, actor string, detail map[string]any, at int64) error {
	d, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	var seq int64
	prev := zeroHash
	err = tx.QueryRowContext(ctx, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	seq++
	h := eventHash(prev, seq, key, typ, actor, string(d), at)
	_, err = tx.ExecContext(ctx, `INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, seq, key, typ, actor, string(d), at, prev, h)
	return err
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

func timeline(ctx context.Context, tx *Tx, key string) ([]Event, error) {
	return queryRows(ctx, tx, `SELECT seq, action_key, type, actor, detail, at_ms, prev_hash, hash
		FROM events WHERE action_key = ? ORDER BY seq`, []any{key}, func(rows *sql.Rows, e *Event) error {
		var d string
		if err := rows.Scan(&e.Seq, &e.ActionKey, &e.Type, &e.Actor, &d, &e.At, &e.PrevHash, &e.Hash); err != nil {
			return err
		}
		_ = json.Unmarshal([]byte(d), &e.Detail)
		return nil
	})
}
