package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// Filter narrows List. Zero fields match everything.
type Filter struct {
	State     State
	Agent     string
	Kind      string
	KeyPrefix string // a prefix of the logical key
	Epoch     string
	// Text matches a substring of the key, agent, kind or target (the
	// console's /).
	Text string
	// Order is the list's order; the zero value is newest first.
	Order Order
	// After continues a list after this row (the last of the previous
	// page), in Order: a keyset cursor, so a page is one index range
	// however deep it is.
	After *Row
	// BeforeID pages backwards: only rows with an id below it.
	BeforeID int64
	// MinID keeps only rows with an id at or above it. Filters other than
	// open work (All by agent, kind, prefix or text; a settled state) scan
	// the projection, which has no index on them (schema 12): with BeforeID
	// it bounds one step of such a scan to a window of ids, so that a
	// caller can show how far it has come (ids run from 1 to Counts.All)
	// and stop, instead of waiting for a scan of every action.
	MinID int64
	// Limit caps the rows returned; zero means 100.
	Limit int
}

// Order is the order of a list.
type Order int

const (
	// NewestFirst lists the most recently recorded actions first.
	NewestFirst Order = iota
	// OldestFirst lists the earliest recorded actions first.
	OldestFirst
	// SoonestDeadline lists by deadline (an approval's expiry, a lease's
	// end), soonest first, then oldest first; rows without one come last.
	SoonestDeadline
)

// String names the order as the console shows it.
func (o Order) String() string {
	switch o {
	case OldestFirst:
		return "oldest first"
	case SoonestDeadline:
		return "soonest deadline"
	}
	return "newest first"
}

// orderSQL is an order's ORDER BY clause and, for a cursor row, the
// condition that keeps only rows after it. A row without a deadline
// sorts as the largest one.
func orderSQL(o Order, after *Row) (by, cond string, args []any) {
	switch o {
	case OldestFirst:
		by = "id ASC"
		if after != nil {
			cond, args = "id > ?", []any{after.ID}
		}
	case SoonestDeadline:
		const dl = "(CASE WHEN deadline_ms > 0 THEN deadline_ms ELSE 9223372036854775807 END)"
		by = dl + " ASC, id ASC"
		if after != nil {
			d := toMS(after.Deadline)
			if after.Deadline.IsZero() || d <= 0 {
				d = 9223372036854775807
			}
			cond, args = "("+dl+" > ? OR ("+dl+" = ? AND id > ?))", []any{d, d, after.ID}
		}
	default:
		by = "id DESC"
		if after != nil {
			cond, args = "id < ?", []any{after.ID}
		}
	}
	return by, cond, args
}

// Row is one action in a list.
type Row struct {
	ID       int64     `json:"id"`
	Key      string    `json:"key"`
	Logical  string    `json:"logical_key"`
	Epoch    string    `json:"epoch"`
	Kind     string    `json:"kind"`
	Agent    string    `json:"agent"`
	State    State     `json:"state"`
	Deadline time.Time `json:"deadline,omitzero"`
	Updated  time.Time `json:"updated,omitzero"`
}

// List returns actions in f.Order (newest first by default), one page at a time through the
// action index; it never loads every row.
func (s *Store) List(ctx context.Context, f Filter) ([]Row, error) {
	now := toMS(s.now()) // the list's one clock reading, bound into its query
	q, args, err := listQuery(f, now)
	if err != nil {
		return nil, err
	}
	var out []Row
	err = s.read(ctx, func(tx *Tx) (err error) {
		out, err = queryRows(ctx, tx, q, args, func(rows *sql.Rows, r *Row) error {
			var stage State
			var dl, up int64
			if err := rows.Scan(&r.ID, &r.Key, &r.Logical, &r.Epoch, &r.Kind, &r.Agent, &stage, &dl, &up); err != nil {
				return err
			}
			r.State, r.Deadline, r.Updated = stateFrom(stage, dl, now), fromMS(dl), fromMS(up)
			return nil
		})
		return err
	})
	return out, err
}

// listQuery is List's statement for f at the time now.
func listQuery(f Filter, now int64) (string, []any, error) {
	if f.Limit <= 0 || f.Limit > 10000 {
		f.Limit = 100
	}
	var where []string
	var args []any
	if f.State != "" {
		if _, err := ParseState(string(f.State)); err != nil {
			return "", nil, err
		}
		w, a := stateSQL(f.State, now)
		where, args = append(where, w), append(args, a...)
	}
	if f.Agent != "" {
		where, args = append(where, "agent = ?"), append(args, f.Agent)
	}
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if f.Epoch != "" {
		where, args = append(where, "epoch = ?"), append(args, f.Epoch)
	}
	if f.KeyPrefix != "" {
		// A range on the indexed column rather than LIKE, which would
		// ignore the index and treat _ and % as wildcards; U+10FFFF sorts
		// after every character and is valid UTF-8 for every engine.
		where, args = append(where, "logical_key >= ? AND logical_key < ?"), append(args, f.KeyPrefix, f.KeyPrefix+"\U0010FFFF")
	}
	if f.Text != "" {
		// Case-insensitive (ASCII letters, as SQLite's lower() folds): an
		// operator typing "refund" finds "Refund".
		t := likeText(f.Text)
		where = append(where, "("+contains("action_key")+" OR "+contains("agent")+" OR "+contains("kind")+" OR "+contains("target")+")")
		args = append(args, t, t, t, t)
	}
	if f.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	if f.MinID > 0 {
		where, args = append(where, "id >= ?"), append(args, f.MinID)
	}
	by, cond, cargs := orderSQL(f.Order, f.After)
	if cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	q := "SELECT id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms FROM action_index"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + by + " LIMIT ?"
	return q, append(args, f.Limit), nil
}

// Counts are the sizes of the console's views.
type Counts struct {
	Pending   int64 `json:"pending"`
	Conflicts int64 `json:"conflicts_to_review"`
	Uncertain int64 `json:"uncertain"`
	Fenced    int64 `json:"fenced_to_review"`
	All       int64 `json:"all"`
	// Next is the earliest deadline still ahead (an approval expiring, a
	// lease running out): when it passes, the counts and states change
	// with no write, so a view must be re-read then.
	Next time.Time `json:"next_deadline,omitzero"`
}

// Counts counts each view through the indexes.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	return read(ctx, s, func(tx *Tx) (Counts, error) {
		var c Counts
		var p, e int64 // the next pending and executing deadlines, 0 for none
		q, args := countsQuery(s.eng, tx.now)
		err := tx.QueryRowContext(ctx, q, args...).Scan(&c.Pending, &c.Uncertain, &c.Conflicts, &c.Fenced, &c.All, &p, &e)
		c.Next = fromMS(earliest(p, e))
		return c, err
	})
}

// countsQuery is Counts' statement at the time now: each view of open
// work through the partial index, All from the ids.
func countsQuery(eng engine.Engine, now int64) (string, []any) {
	pw, pa := stateSQL(StatePending, now)
	uw, ua := stateSQL(StateUncertain, now)
	return `SELECT
			(SELECT count(*) FROM action_index WHERE ` + pw + `),
			(SELECT count(*) FROM action_index WHERE ` + uw + `),
			(SELECT count(*) FROM conflicts c WHERE NOT EXISTS (SELECT 1 FROM conflict_reviews r WHERE r.conflict_id = c.id)),
			(SELECT count(*) FROM fenced f WHERE NOT EXISTS (SELECT 1 FROM fenced_reviews r WHERE r.fenced_id = f.id)),
			` + eng.RowCount("action_index") + `,
			(SELECT coalesce(min(deadline_ms), 0) FROM action_index WHERE ` + openStages + ` AND stage = 'pending' AND deadline_ms > ?),
			(SELECT coalesce(min(deadline_ms), 0) FROM action_index WHERE ` + openStages + ` AND stage = 'executing' AND deadline_ms > ?)`,
		append(append(pa, ua...), now, now)
}

// ConflictRow is one logged conflict.
type ConflictRow struct {
	ID           int64     `json:"id"`
	Key          string    `json:"key"`
	StoredSHA256 string    `json:"stored_sha256"`
	AttemptSHA   string    `json:"attempted_sha256"`
	Attempted    *Payload  `json:"-"`
	Redacted     bool      `json:"redacted"`
	Differs      string    `json:"differs"`
	Agent        string    `json:"agent"`
	At           time.Time `json:"at"`
	Reviewed     bool      `json:"reviewed"`
}

// Conflicts returns logged conflicts, newest first; unreviewed only
// unless all is set.
func (s *Store) Conflicts(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]ConflictRow, error) {
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT c.id, c.action_key, c.stored_sha256, c.attempted_sha256, c.attempted, c.redacted, c.differs, c.agent, c.at_ms,
		EXISTS (SELECT 1 FROM conflict_reviews r WHERE r.conflict_id = c.id) AS reviewed
		FROM conflicts c WHERE (? OR NOT EXISTS (SELECT 1 FROM conflict_reviews r WHERE r.conflict_id = c.id))
		AND (? = '' OR ` + contains("c.action_key") + ` OR ` + contains("c.agent") + `) AND (? = 0 OR c.id < ?)
		ORDER BY c.id DESC LIMIT ?`
	var out []ConflictRow
	err := s.read(ctx, func(tx *Tx) (err error) {
		out, err = queryRows(ctx, tx, q, []any{all, text, likeText(text), likeText(text), beforeID, beforeID, limit}, func(rows *sql.Rows, c *ConflictRow) error {
			var att sql.NullString
			var at int64
			if err := rows.Scan(&c.ID, &c.Key, &c.StoredSHA256, &c.AttemptSHA, &att, &c.Redacted, &c.Differs, &c.Agent, &at, &c.Reviewed); err != nil {
				return err
			}
			c.At = fromMS(at)
			if att.Valid {
				if p, err := DecodePayload([]byte(att.String)); err == nil {
					c.Attempted = &p
				}
			}
			return nil
		})
		return err
	})
	return out, err
}

// FencedRow is one logged fenced call.
type FencedRow struct {
	ID          int64     `json:"id"`
	Key         string    `json:"key"`
	KeyEpoch    string    `json:"key_epoch"`
	ActiveEpoch string    `json:"active_epoch"`
	SHA256      string    `json:"payload_sha256"`
	Agent       string    `json:"agent"`
	Reason      string    `json:"reason"`
	At          time.Time `json:"at"`
	Reviewed    bool      `json:"reviewed"`
}

// Fenced returns logged fenced calls, newest first; unreviewed only unless
// all is set.
func (s *Store) Fenced(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]FencedRow, error) {
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT f.id, f.action_key, f.key_epoch, f.active_epoch, f.payload_sha256, f.agent, f.reason, f.at_ms,
		EXISTS (SELECT 1 FROM fenced_reviews r WHERE r.fenced_id = f.id)
		FROM fenced f WHERE (? OR NOT EXISTS (SELECT 1 FROM fenced_reviews r WHERE r.fenced_id = f.id))
		AND (? = '' OR ` + contains("f.action_key") + ` OR ` + contains("f.agent") + `) AND (? = 0 OR f.id < ?)
		ORDER BY f.id DESC LIMIT ?`
	var out []FencedRow
	err := s.read(ctx, func(tx *Tx) (err error) {
		out, err = queryRows(ctx, tx, q, []any{all, text, likeText(text), likeText(text), beforeID, beforeID, limit}, func(rows *sql.Rows, f *FencedRow) error {
			var at int64
			if err := rows.Scan(&f.ID, &f.Key, &f.KeyEpoch, &f.ActiveEpoch, &f.SHA256, &f.Agent, &f.Reason, &at, &f.Reviewed); err != nil {
				return err
			}
			f.At = fromMS(at)
			return nil
		})
		return err
	})
	return out, err
}

// Detail is everything known about one key: the console's detail pane and
// the CLI's status.
type Detail struct {
	Key       string    `json:"key"`
	Logical   string    `json:"logical_key"`
	Epoch     string    `json:"epoch"`
	State     State     `json:"state"`
	SHA256    string    `json:"payload_sha256"`
	Retained  bool      `json:"retained"`
	Redacted  bool      `json:"redacted"`
	Payload   *Payload  `json:"-"`
	Kind      string    `json:"kind"`
	Agent     string    `json:"agent"`
	Recorded  time.Time `json:"recorded_at,omitzero"`
	Policy    string    `json:"policy,omitempty"`
	PolicyPat string    `json:"policy_pattern,omitempty"`
	// Rule explains the policy decision: the rule and its version (id),
	// its condition, and the values it read.
	Rule *approvals.Explain `json:"rule,omitempty"`
	// Context is the context the key was guarded with (canonical JSON).
	Context json.RawMessage `json:"context,omitempty"`
	// CallerAsserted lists the context fields the caller asserted where
	// a transport derived the others (the MCP proxy's --caller-context).
	CallerAsserted []string  `json:"caller_asserted,omitempty"`
	Requested      time.Time `json:"approval_requested_at,omitzero"`
	Expires        time.Time `json:"approval_expires_at,omitzero"`
	Decision       *Decision `json:"decision,omitempty"`
	// Votes are each operator's decision with its proof; Approvers is the
	// quorum the request needs.
	Votes      []Vote          `json:"votes"`
	Approvers  int             `json:"approvers,omitempty"`
	PermitID   string          `json:"permit_id,omitempty"`
	Issued     time.Time       `json:"permit_issued_at,omitzero"`
	Lease      time.Time       `json:"lease_until,omitzero"`
	Holder     string          `json:"permit_holder,omitempty"`
	Reports    []ReportRow     `json:"reports"`
	Reconcile  *Reconciliation `json:"reconciliation,omitempty"`
	Conflicts  int             `json:"conflicts"`
	Disagrees  bool            `json:"flagged_disagreement"`
	Events     []Event         `json:"-"`
	SafeNewKey bool            `json:"safe_new_key"`
	// Forged names rows of this key that no event commits (inserted by
	// hand): evidence of tampering, shown, never taken as state.
	Forged []string `json:"forged,omitempty"`
	// Archive is the id of the archive the key's facts moved to (0: they
	// are here); only its final state stays here (ArchiveFile names it).
	Archive     int64  `json:"archive_id,omitempty"`
	ArchiveFile string `json:"archive_file,omitempty"`
}

// dropForged sets aside a decision that no event of the key commits: it
// is shown as forged, with its row, and is not the key's decision.
func (d *Detail) dropForged(events []Event) {
	if d.Decision == nil {
		return
	}
	for _, e := range events {
		if e.FactTable == "decisions" && e.FactRow == d.Key {
			return
		}
	}
	d.Forged = append(d.Forged, fmt.Sprintf("decisions action_key=%s (%s by %q): no event commits it; evidence of tampering, not a decision", d.Key, d.Decision.Decision, d.Decision.Operator))
	d.Decision = nil
}

// dropForgedVotes takes out of the votes each one that no event commits
// (inserted by hand): it is shown as forged, with its row id, and counts
// toward nothing, so no one is told a quorum is nearer than it is. The
// one vote a ledger older than schema 6 shows (its decision, no row id)
// stays.
func (d *Detail) dropForgedVotes() {
	kept := d.Votes[:0]
	for _, v := range d.Votes {
		if v.id != "" && v.seq == 0 {
			d.Forged = append(d.Forged, fmt.Sprintf("votes row id=%s (%s by %q): no event commits it; evidence of tampering, not a vote", v.id, v.Decision, v.Operator))
			continue
		}
		kept = append(kept, v)
	}
	d.Votes = kept
	if d.Decision != nil {
		d.Decision.Approvals = d.Approvals()
	}
}

// ReportRow is one stored report.
type ReportRow struct {
	Outcome Outcome   `json:"outcome"`
	Ref     string    `json:"ref"`
	Latency int64     `json:"latency_ms"`
	Kind    string    `json:"kind"`
	At      time.Time `json:"at"`
	// Result is what the action returned, when its reporter kept it.
	Result string `json:"result,omitempty"`
}

// Status returns everything known about key in one snapshot.
func (s *Store) Status(ctx context.Context, key string) (Detail, error) {
	k, err := ParseKey(key)
	if err != nil {
		return Detail{}, err
	}
	var d Detail
	done := false
	if s.eng.Name() == "postgres" {
		// One round trip (statusSQL); a key with signed facts reads its
		// proofs in the one transaction below.
		d = Detail{Key: key, Logical: k.Logical, Epoch: k.Epoch}
		done, err = s.statusOneTrip(ctx, &d)
	}
	if !done && err == nil {
		d, err = read(ctx, s, func(tx *Tx) (Detail, error) {
			d := Detail{Key: key, Logical: k.Logical, Epoch: k.Epoch}
			return d, status(ctx, tx, &d)
		})
	}
	if errors.Is(err, ErrNotFound) {
		return d, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return d, err
}

// contains is the SQL that col holds the text of a likeText argument,
// ignoring ASCII case: LIKE with an escape, which every engine speaks.
func contains(col string) string { return "lower(" + col + ") LIKE lower(?) ESCAPE '\\'" }

// likeText is text as a LIKE pattern that matches it anywhere, literally:
// %, _ and the escape itself stand for themselves.
func likeText(text string) string {
	r := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
	return "%" + r.Replace(text) + "%"
}

// Watch opens a watch on other processes' commits to the ledger: the
// console re-reads only when it reports a change.
func (s *Store) Watch(ctx context.Context) (Watch, error) { return s.eng.Watch(ctx) }

// Watch tells whether any process committed since it was last asked.
type Watch = engine.Watch

// earliest is the smaller of two deadlines, where 0 means none.
func earliest(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// Now is the ledger's clock (Options.Now): what deadlines are compared with.
func (s *Store) Now() time.Time { return s.now() }

// Brief is what a confirmation shows of a key: the payload digest from
// the intent (the fact an operator decides on) and, for reading, its kind
// and target.
type Brief struct {
	Key    string
	SHA256 string
	Kind   string
	Target string
}

// Briefs reads the briefs of many keys in one snapshot and one query per
// hundred keys, for a confirmation that lists them; keys not found are
// left out.
func (s *Store) Briefs(ctx context.Context, keys []string) ([]Brief, error) {
	return read(ctx, s, func(tx *Tx) ([]Brief, error) {
		var out []Brief
		for start := 0; start < len(keys); start += 100 {
			chunk := keys[start:min(start+100, len(keys))]
			args := make([]any, len(chunk))
			for i, k := range chunk {
				args[i] = k
			}
			rows, err := queryRows(ctx, tx, `SELECT i.action_key, i.payload_sha256, coalesce(x.kind, ''), coalesce(x.target, '')
				FROM intents i LEFT JOIN action_index x ON x.action_key = i.action_key
				WHERE i.action_key IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args,
				func(r *sql.Rows, b *Brief) error { return r.Scan(&b.Key, &b.SHA256, &b.Kind, &b.Target) })
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
		}
		return out, nil
	})
}
