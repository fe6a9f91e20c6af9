package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/approvals"
)

// Problem is one integrity failure found by Verify, naming the table and
// the row so an operator can find it.
type Problem struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	Key   string `json:"key,omitempty"`
	Rule  string `json:"rule"`
}

// String formats the problem for a terminal.
func (p Problem) String() string {
	if p.Key != "" {
		return fmt.Sprintf("%s %s (key %s): %s", p.Table, p.Row, p.Key, p.Rule)
	}
	return fmt.Sprintf("%s %s: %s", p.Table, p.Row, p.Rule)
}

// Head is a point on the hash chain: the event count and the hash of the
// last event, for one ledger. A head someone saw and wrote down (a
// witness) must stay on the chain for as long as the ledger lives.
type Head struct {
	LedgerID string `json:"ledger_id"`
	Seq      int64  `json:"seq"`
	Hash     string `json:"hash"`
	// Path is where the ledger was when the head was seen (an absolute
	// file path, or the PostgreSQL location without its password): a
	// witness that names the ledger by id and path reveals another ledger
	// put in its place.
	Path string `json:"path,omitempty"`
}

// VerifyReport is the result of an integrity check.
type VerifyReport struct {
	LedgerID string `json:"ledger_id"`
	Events   int64  `json:"events"`
	Payloads int64  `json:"payloads"`
	Intents  int64  `json:"intents"`
	// Facts counts the fact rows proven by their events.
	Facts int64 `json:"facts"`
	// External counts intents recorded outside tollgate (the seed fixture):
	// they have a hash but no retained payload and no event, which is
	// expected, not a problem.
	External  int64  `json:"external_intents"`
	ChainHead string `json:"chain_head"`
	// Unsealed counts the committed events not yet sealed into the chain
	// (PostgreSQL, schema 16), which verify checks against their fact
	// rows; OldestUnsealedMS is the oldest one's age in milliseconds.
	Unsealed         int64 `json:"unsealed_events,omitempty"`
	OldestUnsealedMS int64 `json:"oldest_unsealed_ms,omitempty"`
	// Anchor names the operators file verify checked signing keys against,
	// or says there is none (and what that means).
	Anchor string `json:"anchor"`
	// Witnessed counts the witnessed heads of this ledger that were checked.
	Witnessed int       `json:"witnessed_heads"`
	Integrity string    `json:"integrity_check"`
	Problems  []Problem `json:"problems"`
	// Unreadable names the fact tables this session's role may not read
	// (on PostgreSQL an agent's role, agent_tokens): their rows were not
	// proven, the events that commit them were.
	Unreadable []string `json:"unreadable_tables,omitempty"`
	// hidden are the fact tables verify does not read, with why
	// (hiddenFactTables).
	hidden map[string]string
	// facts is the running proof that the fact rows and their events
	// match, from the chain walk to the fact step; nil outside VerifyWith.
	facts *factSum
	// path is where the ledger was verified: the head verify witnesses
	// carries it, so that guard's swap rule (SPEC 7) matches a witness
	// that only verify feeds.
	path string
}

// OK reports whether nothing was found.
func (r VerifyReport) OK() bool { return len(r.Problems) == 0 && r.Integrity == "ok" }

// Head is the chain head the report saw, with the ledger's location.
func (r VerifyReport) Head() Head {
	return Head{LedgerID: r.LedgerID, Seq: r.Events, Hash: r.ChainHead, Path: r.path}
}

// Verify proves the ledger from one snapshot and changes nothing: SQLite's
// integrity check; the hash chain; every fact row committed by exactly
// one event whose hash covers the row's content, and every such event by
// its row; every retained payload's digest; the projection recomputed
// from the facts; every permit justified by an approval or an auto rule;
// every operator signature, and every operator-authored fact on a signed
// ledger signed; and every witnessed head of this ledger still on the chain.
func (s *Store) Verify(ctx context.Context, witnessed ...Head) (VerifyReport, error) {
	return s.VerifyWith(ctx, nil, witnessed...)
}

// verifySteps names verify's steps in the order it takes them, for a
// caller that shows progress.
var verifySteps = [...]struct {
	name string
	run  func(context.Context, *Tx, *VerifyReport) error
}{
	{"the hash chain", verifyChain}, {"events not yet sealed", verifyPending}, {"fact rows against their events", verifyFacts}, {"payload digests", verifyPayloads},
	{"conflicts", verifyConflicts}, {"the projection", verifyIndex}, {"permits' justifications", verifyJustified},
	{"signatures", verifySignatures}, {"archived keys and their checkpoints", verifyArchives},
}

// VerifyStepCount is how many steps VerifyWith reports, the engine's own
// check and the witnessed heads included.
const VerifyStepCount = len(verifySteps) + 2

// VerifyWith is Verify, calling step (when not nil) as each of its steps
// begins, with the step's number from 1 and its name: a long run on a
// large ledger can say where it is.
func (s *Store) VerifyWith(ctx context.Context, step func(n int, name string), witnessed ...Head) (VerifyReport, error) {
	if step == nil {
		step = func(int, string) {}
	}
	var rep VerifyReport
	err := s.readAll(ctx, func(tx *Tx) error {
		rep = VerifyReport{}
		var err error
		if rep.facts, err = newFactSum(); err != nil {
			return err
		}
		defer func() { rep.facts = nil }()
		step(1, "the engine's integrity check")
		if rep.Integrity, err = s.eng.Integrity(ctx, tx.tx); err != nil {
			return err
		}
		id, err := ledgerID(ctx, tx)
		if err != nil {
			return err
		}
		rep.LedgerID, rep.path = id, s.witnessName()
		if rep.hidden, err = hiddenFactTables(ctx, tx); err != nil {
			return err
		}
		rep.Unreadable = unreadable(rep.hidden)
		for i, st := range verifySteps {
			step(i+2, st.name)
			if err := st.run(ctx, tx, &rep); err != nil {
				return err
			}
		}
		step(VerifyStepCount, "witnessed heads and the operators file")
		rep.Anchor = s.anchor.Describe()
		if err := verifyAnchor(ctx, tx, &rep, s.anchor); err != nil {
			return err
		}
		return verifyWitnessed(ctx, tx, &rep, witnessed, s.witnessName())
	})
	return rep, err
}

func (r *VerifyReport) add(table, row, key, rule string, args ...any) {
	r.Problems = append(r.Problems, Problem{Table: table, Row: row, Key: key, Rule: fmt.Sprintf(rule, args...)})
}

func verifyChain(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	// The runs of archived events stand in the chain for the events they
	// replace: each must start after the hash before it, and the next
	// event must follow its last hash (archive.go). Read first: a
	// PostgreSQL connection runs one query at a time.
	spans, err := loadSpans(ctx, tx, "")
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+eventCols+" FROM events ORDER BY seq")
	if err != nil {
		return err
	}
	defer rows.Close()
	prev, want, v2 := zeroHash, int64(1), false
	skip := func(upto int64) {
		for len(spans) > 0 && spans[0].first <= upto {
			sp := spans[0]
			spans = spans[1:]
			row := fmt.Sprintf("first_seq=%d", sp.first)
			if sp.first != want {
				rep.add("pruned_events", row, "", "a run of archived events where the chain expected seq %d", want)
			}
			if sp.prev != prev {
				rep.add("pruned_events", row, "", "the run's first_prev does not match the hash of the event before it")
			}
			rep.Events += sp.last - sp.first + 1
			prev, want = sp.hash, sp.last+1
		}
	}
	for rows.Next() {
		var e Event
		d, hv, err := scanEvent(rows, &e)
		if err != nil {
			return err
		}
		skip(e.Seq)
		rep.Events++
		row := fmt.Sprintf("seq=%d", e.Seq)
		if e.Seq != want {
			rep.add("events", row, e.ActionKey, "sequence gap: expected seq %d", want)
		}
		if e.PrevHash != prev {
			rep.add("events", row, e.ActionKey, "prev_hash does not match the hash of the event before it")
		}
		f := factRef{Table: e.FactTable, Row: e.FactRow, SHA256: e.FactSHA256}
		if t := factTableNamed(e.FactTable); t != nil && rep.facts != nil && rep.hidden[t.name] == "" {
			key := ""
			if t.keyCol != "" {
				key = e.ActionKey
			}
			rep.facts.event(t.name, e.FactRow, e.FactSHA256, key)
		}
		if h := eventHash(hv, e.PrevHash, e.Seq, e.ActionKey, e.Type, e.Actor, d, e.At.UnixMilli(), f); h != e.Hash {
			rep.add("events", row, e.ActionKey, "hash does not match the event's contents (recomputed %s)", h)
		}
		switch {
		case hv == 1 && v2:
			rep.add("events", row, e.ActionKey, "a version 1 event after version 2 events (events never go back a version)")
		case hv == 2:
			v2 = true
			if e.FactTable == "" && !factlessEvents[e.Type] {
				rep.add("events", row, e.ActionKey, "a %s event must commit a fact row and commits none", e.Type)
			}
			if t := factTableNamed(e.FactTable); e.FactTable != "" && (t == nil || !slices.Contains(t.events, e.Type) && e.Type != evSealed) {
				rep.add("events", row, e.ActionKey, "a %s event cannot commit a row of %q", e.Type, e.FactTable)
			}
		}
		prev, want = e.Hash, e.Seq+1
	}
	if err := rows.Err(); err != nil {
		return err
	}
	skip(1<<62 - 1)
	rep.ChainHead = prev
	// The head row is what the next append reads: one that does not name
	// the last event would fork the chain there.
	var seq int64
	var hash string
	if err := tx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&seq, &hash); err != nil {
		rep.add("chain_head", "one=1", "", "the chain head row cannot be read (%v)", err)
	} else if seq != want-1 || hash != prev {
		rep.add("chain_head", "one=1", "", "names seq %d, but the chain ends at seq %d", seq, want-1)
	}
	return nil
}

// verifyFacts proves each fact table in both directions: every row is
// committed by exactly one event whose fact hash is the row's content
// (so an edited row, an inserted row and a moved row are named), and
// every event's row is still there (so a deleted row is named). The
// chain walk has taken every event's row out of rep.facts; a plain scan
// of each table puts the rows back, and when they cancel every check the
// join makes holds (factSum). Only when they do not does it join each
// table to its events, row by row, to name the rows that differ.
func verifyFacts(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	if rep.facts != nil {
		n, err := sumFacts(ctx, tx, rep.facts, rep.hidden)
		if err != nil {
			return err
		}
		if rep.facts.zero() {
			rep.Facts += n
			return nil
		}
	}
	before := len(rep.Problems)
	if err := joinFacts(ctx, tx, rep); err != nil {
		return err
	}
	if rep.facts != nil && len(rep.Problems) == before {
		rep.add("events", "", "", "the fact rows and the events that commit them differ, though no single row shows where")
	}
	return nil
}

// sumFacts adds every row of every fact table to sum and counts them.
func sumFacts(ctx context.Context, tx *Tx, sum *factSum, hidden map[string]string) (int64, error) {
	var n int64
	for i := range factTables {
		t := &factTables[i]
		if hidden[t.name] != "" {
			continue
		}
		rows, err := tx.QueryContext(ctx, "SELECT "+t.cols+" FROM "+t.name)
		if err != nil {
			return n, err
		}
		// One row's columns at a time: Scan copies what it keeps.
		vals := make([]any, t.ncols())
		ptrs := make([]any, len(vals))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return n, err
			}
			ref := t.ref(vals)
			sum.row(t.name, ref.Row, ref.SHA256, t.keyOf(vals))
			n++
		}
		if err := rows.Close(); err != nil {
			return n, err
		}
		if err := rows.Err(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// joinFacts names each fact row that no event, or more than one, commits
// as it is, and each event whose row is gone.
func joinFacts(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	evs, err := eventsAndPending(ctx, tx)
	if err != nil {
		return err
	}
	for i := range factTables {
		t := &factTables[i]
		if rep.hidden[t.name] != "" {
			continue
		}
		n := t.ncols()
		q := "SELECT " + prefixCols("t.", t.cols) + ", e.seq, coalesce(e.fact_sha256, ''), coalesce(e.action_key, '') FROM " + t.name +
			" t LEFT JOIN " + evs + " e ON e.fact_table = '" + t.name + "' AND e.fact_row = CAST(t." + t.id + " AS TEXT) ORDER BY t." + t.id + ", e.seq"
		if err := scanFactGroups(ctx, tx, q, n, func(g factGroup) { judgeFact(rep, t, g) }); err != nil {
			return err
		}
		match := "t." + t.id + " = e.fact_row"
		if t.intID {
			match = "t." + t.id + " = CAST(e.fact_row AS INTEGER)"
		}
		type gone struct {
			seq      int64
			row, key string
		}
		missing, err := queryRows(ctx, tx, "SELECT e.seq, e.fact_row, e.action_key FROM "+evs+" e WHERE e.fact_table = '"+t.name+
			"' AND NOT EXISTS (SELECT 1 FROM "+t.name+" t WHERE "+match+") ORDER BY e.seq", nil, func(r *sql.Rows, g *gone) error {
			return r.Scan(&g.seq, &g.row, &g.key)
		})
		if err != nil {
			return err
		}
		for _, g := range missing {
			rep.add(t.name, t.id+"="+g.row, g.key, "event seq=%d commits this row, which is missing: it was deleted", g.seq)
		}
	}
	return nil
}

// factGroup is one fact row and the events that commit it: the first
// event's seq, hash and key, and how many there are.
type factGroup struct {
	vals   []any
	seq    sql.NullInt64
	sha    string
	key    string
	events int
}

// scanFactGroups streams q (a fact table's columns, then e.seq,
// e.fact_sha256, e.action_key, ordered by the row id) and calls fn once
// per row with its events counted: a million rows never sit in memory.
func scanFactGroups(ctx context.Context, tx *Tx, q string, n int, fn func(factGroup)) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cur factGroup
	var curID string
	for rows.Next() {
		var g factGroup
		g.vals = make([]any, n)
		ptrs := make([]any, n+3)
		for j := range g.vals {
			ptrs[j] = &g.vals[j]
		}
		ptrs[n], ptrs[n+1], ptrs[n+2] = &g.seq, &g.sha, &g.key
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		id := colText(g.vals[0])
		if cur.vals != nil && id == curID {
			cur.events++
			continue
		}
		if cur.vals != nil {
			fn(cur)
		}
		cur, curID = g, id
		if g.seq.Valid {
			cur.events = 1
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if cur.vals != nil {
		fn(cur)
	}
	return nil
}

// judgeFact names what is wrong with one fact row and its events, or
// counts it proven.
func judgeFact(rep *VerifyReport, t *factTable, g factGroup) {
	ref := t.ref(g.vals)
	rowName, key := t.id+"="+ref.Row, t.keyOf(g.vals)
	switch {
	case !g.seq.Valid:
		rep.add(t.name, rowName, key, "no event commits this row: it was written outside tollgate")
	case g.events > 1:
		rep.add(t.name, rowName, key, "committed by %d events; a fact row has exactly one", g.events)
	case g.sha != ref.SHA256:
		rep.add(t.name, rowName, key, "the row's content differs from what event seq=%d committed: it was changed", g.seq.Int64)
	case t.keyCol != "" && g.key != key:
		rep.add(t.name, rowName, key, "event seq=%d names key %s, the row another", g.seq.Int64, g.key)
	default:
		rep.Facts++
	}
}

// keyOf is the action key a fact row names, empty for ledger-wide facts.
func (t *factTable) keyOf(vals []any) string {
	if t.keyCol == "" {
		return ""
	}
	if t.keyCol == t.id {
		return colText(vals[0])
	}
	return colText(vals[1])
}

func prefixCols(prefix, cols string) string {
	var out []byte
	for i, c := range splitCols(cols) {
		if i > 0 {
			out = append(out, ", "...)
		}
		out = append(out, prefix+c...)
	}
	return string(out)
}

func splitCols(cols string) []string {
	var out []string
	cur := []byte{}
	for i := 0; i < len(cols); i++ {
		switch c := cols[i]; c {
		case ',':
			out, cur = append(out, string(cur)), cur[:0]
		case ' ', '\n', '\t':
		default:
			cur = append(cur, c)
		}
	}
	return append(out, string(cur))
}

func verifyPayloads(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT i.action_key, i.payload_sha256, p.payload_sha256, p.canonical, p.kind, p.kind_sha256
		FROM intents i LEFT JOIN payloads p ON p.action_key = i.action_key ORDER BY i.action_key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, ih string
		var ph, canon, kind, kindSHA sql.NullString
		if err := rows.Scan(&key, &ih, &ph, &canon, &kind, &kindSHA); err != nil {
			return err
		}
		rep.Intents++
		row := "action_key=" + key
		if !ph.Valid {
			rep.External++
			continue
		}
		rep.Payloads++
		if ph.String != ih {
			rep.add("intents", row, key, "the intent's hash differs from its payload row's hash")
		}
		if canon.Valid {
			// Once the bytes hash to the intent's digest they are what
			// tollgate's canonical encoder wrote, so reading the kind back
			// needs no strict decoder (DecodePayload, for input, costs
			// several times more on a million rows).
			var p struct {
				Kind *string `json:"kind"`
			}
			switch {
			case sha256Hex([]byte(canon.String)) != ih:
				rep.add("payloads", row, key, "retained payload does not hash to the intent's payload_sha256")
			case json.Unmarshal([]byte(canon.String), &p) != nil || p.Kind == nil || *p.Kind != kind.String:
				rep.add("payloads", row, key, "retained payload's kind differs from the kind column")
			}
		}
		if sha256Hex([]byte(kind.String)) != kindSHA.String {
			rep.add("payloads", row, key, "kind does not hash to kind_sha256")
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	return verifyIntentRoles(ctx, tx, rep)
}

func verifyConflicts(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, action_key, attempted_sha256, attempted FROM conflicts WHERE attempted IS NOT NULL ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var key, h, a string
		if err := rows.Scan(&id, &key, &h, &a); err != nil {
			return err
		}
		if sha256Hex([]byte(a)) != h {
			rep.add("conflicts", fmt.Sprintf("id=%d", id), key, "attempted payload does not hash to attempted_sha256")
		}
	}
	return rows.Err()
}

// verifyIndex recomputes every column of the action index, the one table
// that is updated, from the facts, and names each row that disagrees.
// On SQLite a first pass, streamed in the order of the projection's own
// key (kept WITHOUT ROWID, so each row is read where it lies), lets the
// database compare the columns it can derive and reads back only what Go
// must judge: the target, proven by its hash, and the key's parts; a row
// that pass cannot clear is read again whole and judged column by column,
// to name what differs. (Reading thirty columns of every row cost more
// than joining them.) PostgreSQL judges every row whole.
func verifyIndex(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	if err := verifyIndexOrder(ctx, tx, rep); err != nil { // the id column (verify_index.go)
		return err
	}
	if tx.onServer() {
		if err := judgeIndexRows(ctx, tx, rep, ""); err != nil {
			return err
		}
	} else if err := clearIndexRows(ctx, tx, rep); err != nil {
		return err
	}
	missing, err := queryRows(ctx, tx, "SELECT action_key FROM intents i WHERE NOT EXISTS (SELECT 1 FROM action_index x WHERE x.action_key = i.action_key)"+
		" AND NOT EXISTS (SELECT 1 FROM archived_keys ak WHERE ak.action_key = i.action_key)",
		nil, func(r *sql.Rows, k *string) error { return r.Scan(k) })
	for _, k := range missing {
		rep.add("action_index", "action_key="+k, k, "the intent has no index row")
	}
	return err
}

// clearIndexRows is verifyIndex's first pass on SQLite: the database
// compares what it derives in SQL (IS: NULL-safe, and no looser than
// Go's comparison of the scanned values), and every row it cannot clear
// is judged whole by judgeIndexRows.
func clearIndexRows(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT x.action_key, x.logical_key, x.epoch, x.target, pl.action_key IS NOT NULL,
		coalesce(pl.redacted, 0), coalesce(pl.target_sha256, ''), coalesce(
			i.action_key IS NOT NULL
			AND x.stage IS (`+stageSQL+`) AND x.deadline_ms IS (`+deadlineSQL+`)
			AND x.payload_sha256 IS coalesce(i.payload_sha256, '') AND x.kind IS coalesce(pl.kind, '')
			AND x.agent IS coalesce(pl.agent, '') AND x.context_sha256 IS coalesce(pl.context_sha256, '')
			AND x.retained IS (pl.action_key IS NOT NULL) AND x.redacted IS coalesce(pl.redacted, 0)
			AND x.updated_ms IS max(`+indexTimes+`), 0)`+indexFrom+`
		ORDER BY x.action_key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	// Streamed: a million rows are judged one at a time, never held; the
	// few that must be read again wait here.
	var again []any
	for rows.Next() {
		var key, logical, epoch, target, targetSHA string
		var hasPayload, redacted, agrees bool
		if err := rows.Scan(&key, &logical, &epoch, &target, &hasPayload, &redacted, &targetSHA, &agrees); err != nil {
			return err
		}
		wLogical, wEpoch := indexKeyParts(key, hasPayload)
		if !agrees || indexTarget(target, targetSHA, hasPayload, redacted) != target || logical != wLogical || epoch != wEpoch {
			again = append(again, key)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for len(again) > 0 {
		n := min(len(again), 500)
		if err := judgeIndexRows(ctx, tx, rep, " WHERE x.action_key IN (?"+strings.Repeat(", ?", n-1)+")", again[:n]...); err != nil {
			return err
		}
		again = again[n:]
	}
	return nil
}

// indexFrom joins each projection row x to the facts it is derived from.
const indexFrom = `
		FROM action_index x
		LEFT JOIN intents i ON i.action_key = x.action_key
		LEFT JOIN reconciliations c ON c.action_key = x.action_key
		LEFT JOIN reports r ON r.action_key = x.action_key AND r.kind = 'accepted'
		LEFT JOIN permits p ON p.action_key = x.action_key
		LEFT JOIN decisions d ON d.action_key = x.action_key` + committedDecision + `
		LEFT JOIN approval_requests q ON q.action_key = x.action_key
		LEFT JOIN policy_evals e ON e.action_key = x.action_key
		LEFT JOIN payloads pl ON pl.action_key = x.action_key`

// indexTimes are the times of the facts that move a key's stage: the
// projection's updated_ms is the latest of them.
const indexTimes = `coalesce(pl.recorded_ms, 0), coalesce(e.at_ms, 0), coalesce(q.requested_ms, 0), coalesce(d.at_ms, 0),
		coalesce(p.issued_ms, 0), coalesce(r.at_ms, 0), coalesce(c.at_ms, 0)`

// indexTarget is the target the projection must show: the one it shows
// when its hash is the payload row's target_sha256 (itself proven by the
// row's event), which costs a hash, not parsing the canonical JSON; none
// for a redacted or external payload.
func indexTarget(target, targetSHA string, hasPayload, redacted bool) string {
	switch {
	case !hasPayload || redacted:
		return ""
	case sha256Hex([]byte(target)) == targetSHA:
		return target
	default:
		return "a target whose SHA-256 is " + targetSHA
	}
}

// indexKeyParts are the logical key and epoch the projection must show.
func indexKeyParts(key string, hasPayload bool) (logical, epoch string) {
	if hasPayload {
		if k, err := ParseKey(key); err == nil {
			return k.Logical, k.Epoch
		}
	}
	return key, ""
}

// judgeIndexRows streams the projection rows that where selects, each
// with the facts behind it, and names every column that disagrees.
func judgeIndexRows(ctx context.Context, tx *Tx, rep *VerifyReport, where string, args ...any) error {
	type ixRow struct {
		key, logical, epoch, kind, agent, target, stage, sha string
		deadline, updated                                    int64
		ctxSHA, wCtxSHA                                      string
		retained, redacted                                   bool
		hasIntent, hasPayload                                bool
		wKind, wAgent, wTarget, wStage, wSHA                 string
		wDeadline                                            int64
		wRedacted                                            bool
		// the times of the facts that move a key's stage (indexTimes)
		times [7]int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT x.action_key, x.logical_key, x.epoch, x.kind, x.agent, x.target, x.stage, x.payload_sha256,
		x.deadline_ms, x.updated_ms, x.context_sha256, coalesce(pl.context_sha256, ''), x.retained, x.redacted, i.action_key IS NOT NULL, pl.action_key IS NOT NULL,
		coalesce(pl.kind, ''), coalesce(pl.agent, ''), coalesce(pl.target_sha256, ''),
		`+stageSQL+`, coalesce(i.payload_sha256, ''), `+deadlineSQL+`, coalesce(pl.redacted, 0), `+indexTimes+indexFrom+where+`
		ORDER BY x.action_key`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var x ixRow
		t := &x.times
		if err := rows.Scan(&x.key, &x.logical, &x.epoch, &x.kind, &x.agent, &x.target, &x.stage, &x.sha, &x.deadline, &x.updated, &x.ctxSHA, &x.wCtxSHA, &x.retained, &x.redacted,
			&x.hasIntent, &x.hasPayload, &x.wKind, &x.wAgent, &x.wTarget, &x.wStage, &x.wSHA, &x.wDeadline, &x.wRedacted,
			&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6]); err != nil {
			return err
		}
		row := "action_key=" + x.key
		x.wTarget = indexTarget(x.target, x.wTarget, x.hasPayload, x.wRedacted)
		if !x.hasIntent {
			rep.add("action_index", row, x.key, "indexes a key that has no intent")
			continue
		}
		wLogical, wEpoch := indexKeyParts(x.key, x.hasPayload)
		// Compared as they are typed, boxed only to name a difference: a
		// million rows would otherwise allocate a dozen values each.
		differs := func(col string, got, want any) {
			rep.add("action_index", row, x.key, "%s %v disagrees with the facts, which say %v", col, got, want)
		}
		for _, c := range [...]struct{ col, got, want string }{
			{"stage", x.stage, x.wStage}, {"payload_sha256", x.sha, x.wSHA}, {"logical_key", x.logical, wLogical}, {"epoch", x.epoch, wEpoch},
			{"kind", x.kind, x.wKind}, {"agent", x.agent, x.wAgent}, {"target", x.target, x.wTarget}, {"context_sha256", x.ctxSHA, x.wCtxSHA},
		} {
			if c.got != c.want {
				differs(c.col, c.got, c.want)
			}
		}
		for _, c := range [...]struct {
			col       string
			got, want int64
		}{{"deadline_ms", x.deadline, x.wDeadline}, {"updated_ms", x.updated, slices.Max(x.times[:])}} {
			if c.got != c.want {
				differs(c.col, c.got, c.want)
			}
		}
		for _, c := range [...]struct {
			col       string
			got, want bool
		}{{"retained", x.retained, x.hasPayload}, {"redacted", x.redacted, x.wRedacted}} {
			if c.got != c.want {
				differs(c.col, c.got, c.want)
			}
		}
	}
	return rows.Err()
}

// verifyJustified checks the rules that tie facts to each other: a
// permit follows an approval or an auto policy, a decision comes before
// its request's deadline, and a filed report carries the key's permit id.
func verifyJustified(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	type bad struct{ table, key, rule string }
	rows, err := queryRows(ctx, tx, `
		SELECT 'permits', p.action_key, 'a permit with neither an approval nor an auto policy behind it' FROM permits p
			LEFT JOIN policy_evals e ON e.action_key = p.action_key LEFT JOIN decisions d ON d.action_key = p.action_key`+committedDecision+`
			WHERE NOT (coalesce(e.mode, '') = 'auto' OR coalesce(d.decision, '') = 'approved')
		UNION ALL
		SELECT 'decisions', d.action_key, 'decided at or after the request''s deadline' FROM decisions d
			JOIN approval_requests q ON q.action_key = d.action_key WHERE d.at_ms >= q.expires_ms
		UNION ALL
		SELECT 'reports', r.action_key, 'report id=' || r.id || ' carries a permit id that is not the key''s permit' FROM reports r
			JOIN permits p ON p.action_key = r.action_key WHERE r.permit_id != p.permit_id
		UNION ALL
		SELECT 'approval_requests', q.action_key, 'an approval request with no policy evaluation: the quorum its rule asks cannot be known' FROM approval_requests q
			LEFT JOIN policy_evals e ON e.action_key = q.action_key WHERE e.action_key IS NULL
		UNION ALL
		SELECT 'policy_evals', e.action_key, 'its quorum (' || e.approvers || ') is below that of the rule it names (rule ' || r.id || ' needs ' || r.approvers || ')' FROM policy_evals e
			JOIN policy_rules r ON r.id = e.rule_id WHERE r.approvers > e.approvers
		UNION ALL
		SELECT 'policy_evals', e.action_key, 'it names rule ' || e.rule_id || ', which is not in the ledger' FROM policy_evals e
			LEFT JOIN policy_rules r ON r.id = e.rule_id WHERE e.rule_id IS NOT NULL AND e.rule_id <> 0 AND r.id IS NULL`, nil,
		func(r *sql.Rows, b *bad) error { return r.Scan(&b.table, &b.key, &b.rule) })
	for _, b := range rows {
		rep.add(b.table, "action_key="+b.key, b.key, "%s", b.rule)
	}
	if err != nil {
		return err
	}
	if err := verifyPolicy(ctx, tx, rep); err != nil { // verify_policy.go
		return err
	}
	if err := verifyRequestRules(ctx, tx, rep); err != nil || !tx.onServer() {
		return err
	}
	return verifyConditionASTs(ctx, tx, rep)
}

// verifyRequestRules names each approval request whose evaluation names
// a rule whose pattern does not cover the action's kind: the quorum is
// that rule's (requestQuorum), so pointing the evaluation at another
// pattern's one-approver rule would cut it, and guard refuses such a
// key. Pattern matching is Go's (approvals.PatternMatches), so the rows
// are read and matched here; requests are the few keys that wait for
// people, not every evaluation.
func verifyRequestRules(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	type evalRule struct {
		key, pattern, kind string
		rule               int64
	}
	rows, err := queryRows(ctx, tx, `SELECT q.action_key, r.id, r.pattern, pl.kind FROM approval_requests q
		JOIN policy_evals e ON e.action_key = q.action_key JOIN policy_rules r ON r.id = e.rule_id
		JOIN payloads pl ON pl.action_key = q.action_key WHERE pl.kind <> ''`, nil,
		func(r *sql.Rows, e *evalRule) error { return r.Scan(&e.key, &e.rule, &e.pattern, &e.kind) })
	for _, e := range rows {
		if !approvals.PatternMatches(e.pattern, e.kind) {
			rep.add("policy_evals", "action_key="+e.key, e.key, "it names rule %d, whose pattern does not cover the action's kind", e.rule)
		}
	}
	return err
}

// verifyConditionASTs checks, on PostgreSQL, that each rule's condition
// has the translation the database evaluates (schema 11) and that it is
// the condition's own, derived again here from the rule's text: a row
// written by hand that says "true" for "context.amount <= 50" would
// otherwise make the database permit what the signed rule does not.
func verifyConditionASTs(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	type stored struct {
		id        int64
		condition string
		ast       sql.NullString
	}
	// A ledger read before its upgrade (a read-only open) has none yet.
	var since bool
	if err := tx.QueryRowContext(ctx, "SELECT to_regclass('policy_conditions') IS NOT NULL").Scan(&since); err != nil || !since {
		return err
	}
	rows, err := queryRows(ctx, tx, `SELECT p.id, p.condition, c.ast FROM policy_rules p LEFT JOIN policy_conditions c ON c.rule_id = p.id
		WHERE p.condition <> '' ORDER BY p.id`, nil, func(r *sql.Rows, s *stored) error { return r.Scan(&s.id, &s.condition, &s.ast) })
	for _, s := range rows {
		row := fmt.Sprintf("id=%d", s.id)
		want, terr := approvals.PortableConditionAST(s.condition)
		switch {
		case terr != nil:
			rep.add("policy_rules", row, "", "the database cannot evaluate its condition (%v): guard refuses keys it decides; set the rule again with a condition it can", terr)
		case !s.ast.Valid:
			rep.add("policy_rules", row, "", "no translation of its condition is stored for the database to evaluate: guard refuses keys it decides; set the rule again")
		case s.ast.String != want:
			rep.add("policy_conditions", "rule_id="+strconv.FormatInt(s.id, 10), "", "the stored translation of rule %d's condition is not the condition's own", s.id)
		}
	}
	return err
}

// verifyWitnessed checks that every witnessed head of this ledger is
// still on the chain: a cut tail loses the witnessed event, a chain
// recomputed from scratch changes its hash.
func verifyWitnessed(ctx context.Context, tx *Tx, rep *VerifyReport, heads []Head, path string) error {
	for _, h := range heads {
		if h.LedgerID != rep.LedgerID {
			if h.Path != "" && h.Path == path {
				rep.add("witness", "ledger_id="+h.LedgerID, "", "%s", swapped(h, rep.LedgerID))
			}
			continue
		}
		rep.Witnessed++
		row := fmt.Sprintf("seq=%d", h.Seq)
		if h.Seq == 0 {
			continue
		}
		hash, err := witnessedHash(ctx, tx, h)
		switch {
		case err == sql.ErrNoRows:
			rep.add("events", row, "", "a witnessed head (event %d, hash %s) is gone: the chain was cut to %d events", h.Seq, h.Hash, rep.Events)
		case err == errUncommittedRun:
			rep.add("events", row, "", "a witnessed head (event %d, hash %s) is gone, and %v", h.Seq, h.Hash, err)
		case err != nil:
			return err
		case hash != h.Hash:
			rep.add("events", row, "", "a witnessed head (event %d) had hash %s and now has %s: the chain was rewritten", h.Seq, h.Hash, hash)
		}
	}
	return nil
}
