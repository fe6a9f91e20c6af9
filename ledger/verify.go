package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// Problem is one integrity failure found by Verify, naming the table and
// the row so an operator can find it.
type Problem struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	Rule  string `json:"rule"`
}

// String formats the problem for a terminal.
func (p Problem) String() string { return fmt.Sprintf("%s %s: %s", p.Table, p.Row, p.Rule) }

// VerifyReport is the result of an integrity check.
type VerifyReport struct {
	Events   int64 `json:"events"`
	Payloads int64 `json:"payloads"`
	Intents  int64 `json:"intents"`
	// External counts intents recorded outside tollgate (the seed fixture):
	// they have a hash but no retained payload and no event, which is
	// expected, not a problem.
	External  int64     `json:"external_intents"`
	ChainHead string    `json:"chain_head"`
	Integrity string    `json:"integrity_check"`
	Problems  []Problem `json:"problems"`
}

// OK reports whether nothing was found.
func (r VerifyReport) OK() bool { return len(r.Problems) == 0 && r.Integrity == "ok" }

// Verify recomputes the hash chain and every retained payload's digest,
// checks that each retained payload agrees with its intent, and runs
// SQLite's own integrity check. It reads one snapshot and changes nothing.
func (s *Store) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	err := s.read(ctx, func(tx *Tx) error {
		rep = VerifyReport{}
		if err := tx.QueryRowContext(ctx, "PRAGMA integrity_check(1)").Scan(&rep.Integrity); err != nil {
			return err
		}
		if err := verifyChain(ctx, tx, &rep); err != nil {
			return err
		}
		if err := verifyPayloads(ctx, tx, &rep); err != nil {
			return err
		}
		if err := verifyIndex(ctx, tx, &rep); err != nil {
			return err
		}
		return verifyConflicts(ctx, tx, &rep)
	})
	return rep, err
}

func (r *VerifyReport) add(table, row, rule string, args ...any) {
	r.Problems = append(r.Problems, Problem{table, row, fmt.Sprintf(rule, args...)})
}

func verifyChain(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, "SELECT seq, action_key, type, actor, detail, at_ms, prev_hash, hash FROM events ORDER BY seq")
	if err != nil {
		return err
	}
	defer rows.Close()
	prev, want := zeroHash, int64(1)
	for rows.Next() {
		var e Event
		var d string
		if err := rows.Scan(&e.Seq, &e.ActionKey, &e.Type, &e.Actor, &d, &e.At, &e.PrevHash, &e.Hash); err != nil {
			return err
		}
		rep.Events++
		row := fmt.Sprintf("seq=%d", e.Seq)
		if e.Seq != want {
			rep.add("events", row, "sequence gap: expected seq %d", want)
		}
		if e.PrevHash != prev {
			rep.add("events", row, "prev_hash does not match the hash of the event before it")
		}
		if h := eventHash(e.PrevHash, e.Seq, e.ActionKey, e.Type, e.Actor, d, e.At); h != e.Hash {
			rep.add("events", row, "hash does not match the event's contents (recomputed %s)", h)
		}
		prev, want = e.Hash, e.Seq+1
	}
	rep.ChainHead = prev
	return rows.Err()
}

func verifyPayloads(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT i.action_key, i.payload_sha256, p.payload_sha256, p.canonical, p.kind, p.kind_sha256,
		(SELECT count(*) FROM events e WHERE e.action_key = i.action_key AND e.type = 'recorded'),
		coalesce(x.payload_sha256, '')
		FROM intents i LEFT JOIN payloads p ON p.action_key = i.action_key
		LEFT JOIN action_index x ON x.action_key = i.action_key ORDER BY i.action_key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, ih string
		var ph, canon, kind, kindSHA sql.NullString
		var recorded int
		var xh string
		if err := rows.Scan(&key, &ih, &ph, &canon, &kind, &kindSHA, &recorded, &xh); err != nil {
			return err
		}
		rep.Intents++
		row := "action_key=" + fmt.Sprintf("%q", key)
		if xh != ih {
			rep.add("action_index", row, "index copy of the hash differs from the intent's hash")
		}
		if !ph.Valid {
			rep.External++
			continue
		}
		rep.Payloads++
		if ph.String != ih {
			rep.add("payloads", row, "payload_sha256 differs from the intent's hash")
		}
		if canon.Valid && sha256Hex([]byte(canon.String)) != ih {
			rep.add("payloads", row, "retained payload does not hash to the intent's payload_sha256")
		}
		if sha256Hex([]byte(kind.String)) != kindSHA.String {
			rep.add("payloads", row, "kind does not hash to kind_sha256")
		}
		if recorded != 1 {
			rep.add("events", row, "expected one 'recorded' event for a retained intent, found %d", recorded)
		}
	}
	return rows.Err()
}

func verifyConflicts(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, attempted_sha256, attempted FROM conflicts WHERE attempted IS NOT NULL ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var h, a string
		if err := rows.Scan(&id, &h, &a); err != nil {
			return err
		}
		if sha256Hex([]byte(a)) != h {
			rep.add("conflicts", fmt.Sprintf("id=%d", id), "attempted payload does not hash to attempted_sha256")
		}
	}
	return rows.Err()
}

// verifyIndex recomputes every key's stage and deadline from the facts and
// compares them with the action index, the one table that is updated.
func verifyIndex(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT x.action_key, x.stage, x.deadline_ms,
		CASE
			WHEN c.action_key IS NOT NULL THEN 'reconciled'
			WHEN r.outcome = 'unknown' THEN 'uncertain'
			WHEN r.outcome IS NOT NULL THEN r.outcome
			WHEN p.action_key IS NOT NULL THEN 'executing'
			WHEN d.decision IS NOT NULL THEN d.decision
			WHEN q.action_key IS NOT NULL THEN 'pending'
			WHEN e.mode = 'deny' THEN 'denied'
			ELSE 'recorded'
		END,
		CASE
			WHEN c.action_key IS NULL AND r.outcome IS NULL AND p.action_key IS NOT NULL THEN p.lease_ms
			WHEN p.action_key IS NULL AND d.decision IS NULL AND q.action_key IS NOT NULL THEN q.expires_ms
			ELSE 0
		END
		FROM action_index x
		LEFT JOIN reconciliations c ON c.action_key = x.action_key
		LEFT JOIN reports r ON r.action_key = x.action_key AND r.kind = 'accepted'
		LEFT JOIN permits p ON p.action_key = x.action_key
		LEFT JOIN decisions d ON d.action_key = x.action_key
		LEFT JOIN approval_requests q ON q.action_key = x.action_key
		LEFT JOIN policy_evals e ON e.action_key = x.action_key
		ORDER BY x.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, stage, want string
		var deadline, wantDeadline int64
		if err := rows.Scan(&key, &stage, &deadline, &want, &wantDeadline); err != nil {
			return err
		}
		if stage != want || deadline != wantDeadline {
			rep.add("action_index", fmt.Sprintf("action_key=%q", key), "stage %s (deadline %d) disagrees with the facts: %s (deadline %d)", stage, deadline, want, wantDeadline)
		}
	}
	return rows.Err()
}
