package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

// Retention (SPEC 11). Archive moves settled actions, with every fact,
// signature and event that proves them, into an archive ledger file that
// verify proves on its own, and keeps in the live ledger per archived key
// only what keeps its promise: the intents row (the payload digest a
// retry is compared with, in the seed's own table, so the seed fixture
// still sees the key), the final state, the context digest and the
// archive it went to. The removed events leave runs of sequence numbers;
// each run is kept as one pruned_events row (the hash before it, the hash
// it ends with), so the live chain still links from its first event to
// its head. A checkpoint event commits the archives row, which carries
// the digests of the archived keys and of the runs.
//
// The archive file is the whole ledger as it stood when it was copied
// (a backup), sealed by one last event: the archived keys' facts are in
// it whole, and so is the chain up to the checkpoint. A sealed ledger
// opens read-only, so no agent can be granted anything from an archive.

// evCheckpoint commits an archives row; evArchiveSealed ends an archive
// file's chain (a factless event: what it seals is the chain before it).
const (
	evCheckpoint    = "archive_checkpoint"
	evArchiveSealed = "archive_sealed"
)

// ArchiveOptions says what to archive and where.
type ArchiveOptions struct {
	// SettledBefore: only actions whose last event is older are archived.
	SettledBefore time.Time
	// To is the archive file to create. An existing file is replaced only
	// when it is an unfinished archive of this ledger (a run killed after
	// the copy and before the checkpoint); anything else is refused.
	To string
	// Operator names who archived, for the checkpoint event.
	Operator string
}

// ArchiveResult is what an archive run did.
type ArchiveResult struct {
	File string `json:"file"`
	// Keys is how many actions moved; Spans how many runs of events.
	Keys  int `json:"keys"`
	Spans int `json:"spans"`
	// Through is the live chain's head the archive copied; ArchiveHead the
	// archive's own head (after its seal); Checkpoint the live head after
	// the checkpoint event.
	Through     Head `json:"through"`
	ArchiveHead Head `json:"archive_head"`
	Checkpoint  Head `json:"checkpoint"`
}

// ErrArchive is an archive run refused by one of its rules (named in the
// message): nothing in the live ledger changed.
var ErrArchive = fmt.Errorf("%w: archive", ErrInvalidInput)

// archivable are the final states an action may be archived in; pending,
// executing, uncertain, recorded and approved actions stay, and so does
// every key with a conflict or a fenced call.
var archivable = map[State]bool{StateDenied: true, StateRejected: true, StateExpired: true,
	StateSucceeded: true, StateFailed: true, StateReconciled: true}

// Archive moves the actions settled before opt.SettledBefore into a new
// archive file at opt.To. It is safe to run again after it was killed at
// any point: before the checkpoint commits, the live ledger is unchanged
// and the unfinished file is replaced; after, the keys are archived.
func (s *Store) Archive(ctx context.Context, opt ArchiveOptions) (ArchiveResult, error) {
	var res ArchiveResult
	if s.ro {
		return res, fmt.Errorf("%w: ledger opened read-only", ErrReadOnly)
	}
	if opt.To == "" {
		return res, fmt.Errorf("%w: --to FILE is required", ErrInvalidInput)
	}
	abs, err := filepath.Abs(opt.To)
	if err != nil {
		return res, err
	}
	res.File = abs
	if err := s.archiveTarget(ctx, abs); err != nil {
		return res, err
	}
	through, head, err := s.writeArchive(ctx, abs, opt.Operator)
	if err != nil {
		return res, err
	}
	res.Through, res.ArchiveHead = through, head
	cutoff := toMS(opt.SettledBefore)
	err = s.write(ctx, func(tx *Tx) error {
		n, spans, err := archiveCheckpoint(ctx, tx, abs, through, head, cutoff, opt.Operator)
		res.Keys, res.Spans = n, spans
		return err
	})
	if err != nil {
		return res, err
	}
	s.archived.Store(true)
	res.Checkpoint, err = s.Head(ctx)
	return res, err
}

// archiveTarget refuses a destination that is not free: a file that a
// checkpoint of this ledger names, or anything that is not an unfinished
// archive of this ledger, which is removed.
func (s *Store) archiveTarget(ctx context.Context, abs string) error {
	var named int
	err := s.read(ctx, func(tx *Tx) error {
		return tx.QueryRowContext(ctx, "SELECT count(*) FROM archives WHERE file = ?", abs).Scan(&named)
	})
	if err != nil {
		return err
	}
	if named > 0 {
		return fmt.Errorf("%w: %s is already an archive of this ledger: choose a new file", ErrArchive, abs)
	}
	if _, err := os.Lstat(abs); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	a, err := Open(ctx, abs, Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%w: %s exists and is not an archive of this ledger: refusing to replace it", ErrArchive, abs)
	}
	aid, aerr := a.ledgerIDOf(ctx)
	sealed := a.sealed
	a.Close()
	id, err := s.ledgerIDOf(ctx)
	if err != nil {
		return err
	}
	if aerr != nil || aid != id || !sealed {
		return fmt.Errorf("%w: %s exists and is not an unfinished archive of this ledger: refusing to replace it", ErrArchive, abs)
	}
	// An archive of this ledger that no checkpoint names: a run that was
	// killed before its checkpoint committed. Its keys are still live.
	return os.Remove(abs)
}

func (s *Store) ledgerIDOf(ctx context.Context) (string, error) {
	return read(ctx, s, func(tx *Tx) (string, error) { return ledgerID(ctx, tx) })
}

// writeArchive copies the ledger to a temporary file beside abs, seals
// the copy's chain, and moves it into place; it returns the live head the
// copy holds (through) and the sealed copy's head.
func (s *Store) writeArchive(ctx context.Context, abs, operator string) (through, head Head, err error) {
	tmp := abs + ".partial"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return through, head, err
	}
	copyTo := s.eng.Backup
	if s.eng.Name() != "sqlite" {
		// An archive is a ledger file: a PostgreSQL ledger's is an SQLite
		// copy of it, made from one snapshot.
		copyTo = func(ctx context.Context, dst string) error { return copyToSQLite(ctx, s, dst) }
	}
	if err := copyTo(ctx, tmp); err != nil {
		return through, head, err
	}
	defer os.Remove(tmp)
	if through, head, err = seal(ctx, tmp, operator, s.now); err != nil {
		return through, head, err
	}
	through.Path, head.Path = s.witnessName(), abs
	if err := os.Link(tmp, abs); err != nil {
		return through, head, err
	}
	return through, head, syncDir(filepath.Dir(abs))
}

// seal appends the seal event to the copy at path and returns its head
// before and after.
func seal(ctx context.Context, path, operator string, now func() time.Time) (through, head Head, err error) {
	a, err := Open(ctx, path, Options{Now: now})
	if err != nil {
		return through, head, err
	}
	defer func() {
		if cerr := a.Close(); err == nil {
			err = cerr
		}
	}()
	if through, err = a.Head(ctx); err != nil {
		return through, head, err
	}
	err = a.write(ctx, func(tx *Tx) error {
		return appendEvent(ctx, tx, "", evArchiveSealed, operator, map[string]any{"through_seq": through.Seq}, tx.now, nil)
	})
	if err != nil {
		return through, head, err
	}
	head, err = a.Head(ctx)
	return through, head, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// archiveKey is one key chosen to move, with what its stub keeps.
type archiveKey struct {
	key, sha, ctx string
	state         State
	result        Result
}

// archiveCheckpoint removes the chosen keys' facts and events from the live
// ledger, keeps their stubs and the runs of removed events, and commits
// the archives row with its checkpoint event; all in tx.
func archiveCheckpoint(ctx context.Context, tx *Tx, file string, through, head Head, cutoff int64, operator string) (int, int, error) {
	keys, err := chooseArchived(ctx, tx, through.Seq, cutoff)
	if err != nil {
		return 0, 0, err
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) + 1 FROM archives").Scan(&id); err != nil {
		return 0, 0, err
	}
	// The stubs go in first: they are the set every removal below names
	// (set-based statements, not a round of them per key: a million keys
	// are archived in one transaction that holds the write lock).
	if err := insertStubs(ctx, tx, keys, id); err != nil {
		return 0, 0, err
	}
	runs, err := prunedRuns(ctx, tx, through.Seq, id)
	if err != nil {
		return 0, 0, err
	}
	restore, err := suspendAppendOnly(ctx, tx, appendOnlyTables...)
	if err != nil {
		return 0, 0, err
	}
	if err := removeArchived(ctx, tx, through.Seq, id); err != nil {
		return 0, 0, err
	}
	if err := restore(); err != nil {
		return 0, 0, err
	}
	for _, r := range runs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO pruned_events(first_seq, last_seq, first_prev, last_hash, archive_id) VALUES (?, ?, ?, ?, ?)",
			r.first, r.last, r.prev, r.hash, id); err != nil {
			return 0, 0, err
		}
	}
	spans := len(runs)
	kd, err := archivedDigest(ctx, tx, id)
	if err != nil {
		return 0, 0, err
	}
	sd, err := spansDigest(ctx, tx, id)
	if err != nil {
		return 0, 0, err
	}
	lid, err := ledgerID(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	ref, err := insertFact(ctx, tx, "archives", "id, file, ledger_id, through_seq, through_hash, head_seq, head_hash, keys, keys_sha256, spans, spans_sha256, settled_before_ms, operator, at_ms",
		id, file, lid, through.Seq, through.Hash, head.Seq, head.Hash, int64(len(keys)), kd, int64(spans), sd, cutoff, operator, tx.now)
	if err != nil {
		return 0, 0, err
	}
	err = appendEvent(ctx, tx, "", evCheckpoint, operator, map[string]any{"file": filepath.Base(file), "keys": len(keys), "through_seq": through.Seq}, tx.now, &ref)
	return len(keys), spans, err
}

// chooseArchived reads, from the facts, the keys that may move: a final
// state reached before cutoff, every event of the key in the copied chain
// (through), and no conflict or fenced call.
func chooseArchived(ctx context.Context, tx *Tx, through, cutoff int64) ([]archiveKey, error) {
	type cand struct {
		archiveKey
		stage              string
		deadline, last, at int64
	}
	rows, err := queryRows(ctx, tx, "SELECT i.action_key, i.payload_sha256, coalesce(pl.context_sha256, ''), "+stageSQL+", "+deadlineSQL+
		", coalesce(c.result, ''), coalesce(ev.last, 0), coalesce(ev.at, 0)"+factsFrom+
		` LEFT JOIN payloads pl ON pl.action_key = i.action_key
		LEFT JOIN (SELECT action_key, max(seq) AS last, max(at_ms) AS at FROM events WHERE action_key != '' GROUP BY action_key) ev ON ev.action_key = i.action_key
		WHERE NOT EXISTS (SELECT 1 FROM archived_keys ak WHERE ak.action_key = i.action_key)
		AND NOT EXISTS (SELECT 1 FROM conflicts cf WHERE cf.action_key = i.action_key)
		AND NOT EXISTS (SELECT 1 FROM fenced fe WHERE fe.action_key = i.action_key)
		ORDER BY i.action_key`, nil, func(r *sql.Rows, c *cand) error {
		var res string
		err := r.Scan(&c.key, &c.sha, &c.ctx, &c.stage, &c.deadline, &res, &c.last, &c.at)
		c.result = Result(res)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []archiveKey
	for _, c := range rows {
		c.state = stateFrom(State(c.stage), c.deadline, tx.now)
		settled := c.at
		if c.state == StateExpired {
			settled = max(settled, c.deadline)
		}
		if !archivable[c.state] || c.last == 0 || c.last > through || settled >= cutoff {
			continue
		}
		out = append(out, c.archiveKey)
	}
	return out, nil
}

// keyedFacts are the fact tables whose rows belong to one key, and go
// with it, each before the table its foreign key names; signatures are
// found through the rows they sign.
var keyedFacts = []string{"permit_attempts", "set_aside", "reconciliations", "reports", "report_refusals", "votes", "decisions", "permits", "approval_requests", "policy_evals", "payloads"}

// insertStubs stores the chosen keys' stubs, many rows a statement.
func insertStubs(ctx context.Context, tx *Tx, keys []archiveKey, archive int64) error {
	const batch = 200
	for lo := 0; lo < len(keys); lo += batch {
		chunk := keys[lo:min(lo+batch, len(keys))]
		args := make([]any, 0, 5*len(chunk))
		for _, k := range chunk {
			args = append(args, k.key, archive, string(k.state), string(k.result), k.ctx)
		}
		q := "INSERT INTO archived_keys(action_key, archive_id, state, result, context_sha256) VALUES (?, ?, ?, ?, ?)" +
			strings.Repeat(", (?, ?, ?, ?, ?)", len(chunk)-1)
		if _, err := tx.tx.ExecContext(ctx, tx.cache.sql(q), args...); err != nil {
			return err
		}
	}
	return nil
}

// The rows archive removes, named once: an archive's keys, the
// signatures over their facts, and the events of both up to the copy.
const (
	archivedSet = "(SELECT action_key FROM archived_keys WHERE archive_id = ?)"
	archivedSig = "(s.fact_table IN ('decisions', 'reconciliations') AND s.fact_row IN " + archivedSet +
		") OR (s.fact_table = 'votes' AND s.fact_row IN (SELECT CAST(v.id AS TEXT) FROM votes v WHERE v.action_key IN " + archivedSet + "))"
	archivedEvents = "seq <= ? AND (action_key IN " + archivedSet +
		" OR (fact_table = 'signatures' AND fact_row IN (SELECT CAST(s.id AS TEXT) FROM signatures s WHERE " + archivedSig + ")))"
)

// prunedRuns reads the events archive will remove, in order, and returns
// their runs of consecutive numbers with each run's ends.
func prunedRuns(ctx context.Context, tx *Tx, through, archive int64) ([]span, error) {
	rows, err := tx.QueryContext(ctx, "SELECT seq, prev_hash, hash FROM events WHERE "+archivedEvents+" ORDER BY seq",
		through, archive, archive, archive)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []span
	for rows.Next() {
		var seq int64
		var prev, hash string
		if err := rows.Scan(&seq, &prev, &hash); err != nil {
			return nil, err
		}
		if n := len(runs); n > 0 && runs[n-1].last == seq-1 {
			runs[n-1].last, runs[n-1].hash = seq, hash
			continue
		}
		runs = append(runs, span{first: seq, last: seq, prev: prev, hash: hash, archive: archive})
	}
	return runs, rows.Err()
}

// removeArchived deletes, with the append-only triggers lifted, the
// archive's events, the signatures over its keys' facts, the facts and
// the projection rows.
func removeArchived(ctx context.Context, tx *Tx, through, archive int64) error {
	steps := []struct {
		q    string
		args []any
	}{
		{"DELETE FROM events WHERE " + archivedEvents, []any{through, archive, archive, archive}},
		{"DELETE FROM signatures WHERE id IN (SELECT s.id FROM signatures s WHERE " + archivedSig + ")", []any{archive, archive}},
	}
	for _, t := range keyedFacts {
		if tx.server {
			t = postgres.Table(t) // a view's base table
		}
		steps = append(steps, struct {
			q    string
			args []any
		}{"DELETE FROM " + t + " WHERE action_key IN " + archivedSet, []any{archive}})
	}
	steps = append(steps, struct {
		q    string
		args []any
	}{"DELETE FROM action_index WHERE action_key IN " + archivedSet, []any{archive}})
	for _, st := range steps {
		if _, err := tx.tx.ExecContext(ctx, tx.cache.sql(st.q), st.args...); err != nil {
			return err
		}
	}
	return nil
}

// appendOnlyTables are the tables whose DELETE triggers archive lifts,
// inside its own transaction only.
var appendOnlyTables = append([]string{"signatures", "events", "action_index"}, keyedFacts...)

// suspendAppendOnly drops the DELETE triggers of tables (SQLite's), inside tx, and returns the function that creates
// them again from their own SQL before tx commits. A run killed in
// between rolls back with its transaction: the triggers are never gone
// for anyone else.
func suspendAppendOnly(ctx context.Context, tx *Tx, tables ...string) (func() error, error) {
	if tx.server {
		return suspendServerTriggers(ctx, tx, tables)
	}
	in := "'" + strings.Join(tables, "', '") + "'"
	type trig struct{ name, sql string }
	trigs, err := queryRows(ctx, tx, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ("+in+") AND sql LIKE '%BEFORE DELETE%' ORDER BY name",
		nil, func(r *sql.Rows, t *trig) error { return r.Scan(&t.name, &t.sql) })
	if err != nil {
		return nil, err
	}
	for _, t := range trigs {
		if _, err := tx.tx.ExecContext(ctx, `DROP TRIGGER "`+t.name+`"`); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, t := range trigs {
			if _, err := tx.tx.ExecContext(ctx, t.sql); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// suspendServerTriggers is suspendAppendOnly on PostgreSQL: the tables'
// own triggers are disabled inside tx, which only the schema's owner may
// do (anyone else is refused, exit 77) and which locks the tables until
// tx ends; a transaction that fails leaves them enabled.
func suspendServerTriggers(ctx context.Context, tx *Tx, tables []string) (func() error, error) {
	for _, t := range tables {
		if _, err := tx.tx.ExecContext(ctx, "ALTER TABLE "+postgres.Table(t)+" DISABLE TRIGGER USER"); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, t := range tables {
			if _, err := tx.tx.ExecContext(ctx, "ALTER TABLE "+postgres.Table(t)+" ENABLE TRIGGER USER"); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// archivedDigest is the SHA-256 over one archive's stubs in key order,
// each with the intent's payload digest: what the checkpoint commits of
// them, and what the archive file must reproduce from its facts.
func archivedDigest(ctx context.Context, tx *Tx, archive int64) (string, error) {
	h := sha256.New()
	rows, err := tx.QueryContext(ctx, `SELECT ak.action_key, coalesce(i.payload_sha256, ''), ak.state, ak.result, ak.context_sha256
		FROM archived_keys ak LEFT JOIN intents i ON i.action_key = ak.action_key WHERE ak.archive_id = ? ORDER BY ak.action_key`, archive)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var k archiveKey
		var st, res string
		if err := rows.Scan(&k.key, &k.sha, &st, &res, &k.ctx); err != nil {
			return "", err
		}
		k.state, k.result = State(st), Result(res)
		k.fold(h)
	}
	return hex.EncodeToString(h.Sum(nil)), rows.Err()
}

// fold writes one stub into a digest, each field with its length.
func (k archiveKey) fold(h interface{ Write([]byte) (int, error) }) {
	for _, f := range [...]string{k.key, k.sha, string(k.state), string(k.result), k.ctx} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
}

// spansDigest is the SHA-256 over one archive's runs in seq order.
func spansDigest(ctx context.Context, tx *Tx, archive int64) (string, error) {
	h := sha256.New()
	spans, err := loadSpans(ctx, tx, "WHERE archive_id = ?", archive)
	for _, s := range spans {
		fmt.Fprintf(h, "%d,%d,%s,%s\n", s.first, s.last, s.prev, s.hash)
	}
	return hex.EncodeToString(h.Sum(nil)), err
}

// span is one run of removed events.
type span struct {
	first, last int64
	prev, hash  string
	archive     int64
}

func loadSpans(ctx context.Context, tx *Tx, where string, args ...any) ([]span, error) {
	return queryRows(ctx, tx, "SELECT first_seq, last_seq, first_prev, last_hash, archive_id FROM pruned_events "+where+" ORDER BY first_seq", args,
		func(r *sql.Rows, s *span) error { return r.Scan(&s.first, &s.last, &s.prev, &s.hash, &s.archive) })
}

// archiveRow is one archives row as verify and verify --archive read it.
type archiveRow struct {
	id                int64
	file, ledger      string
	through, head     Head
	keys, spans       int64
	keysSHA, spansSHA string
	settledBefore, at int64
	operator          string
}

func loadArchives(ctx context.Context, tx *Tx) ([]archiveRow, error) {
	return queryRows(ctx, tx, `SELECT id, file, ledger_id, through_seq, through_hash, head_seq, head_hash, keys, keys_sha256, spans, spans_sha256, settled_before_ms, operator, at_ms
		FROM archives ORDER BY id`, nil, func(r *sql.Rows, a *archiveRow) error {
		return r.Scan(&a.id, &a.file, &a.ledger, &a.through.Seq, &a.through.Hash, &a.head.Seq, &a.head.Hash, &a.keys, &a.keysSHA, &a.spans, &a.spansSHA,
			&a.settledBefore, &a.operator, &a.at)
	})
}

// verifyArchives proves what archive left behind: each archives row's
// digests recompute from its stubs and runs, every stub stands on an
// intent with no facts or projection row left, and every run's numbers
// hold no event. (The chain walk proves that the runs link; verifyFacts
// that the checkpoint event commits the row.)
func verifyArchives(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	archives, err := loadArchives(ctx, tx)
	if err != nil {
		return err
	}
	for _, a := range archives {
		row := "id=" + strconv.FormatInt(a.id, 10)
		kd, err := archivedDigest(ctx, tx, a.id)
		if err != nil {
			return err
		}
		sd, err := spansDigest(ctx, tx, a.id)
		if err != nil {
			return err
		}
		var nk, ns int64
		if err := tx.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM archived_keys WHERE archive_id = ?), (SELECT count(*) FROM pruned_events WHERE archive_id = ?)", a.id, a.id).Scan(&nk, &ns); err != nil {
			return err
		}
		if kd != a.keysSHA || nk != a.keys {
			rep.add("archived_keys", "archive_id="+strconv.FormatInt(a.id, 10), "", "the archived keys (%d) are not the %d the checkpoint committed: a key's stub was added, removed or changed", nk, a.keys)
		}
		if sd != a.spansSHA || ns != a.spans {
			rep.add("pruned_events", "archive_id="+strconv.FormatInt(a.id, 10), "", "the runs of archived events (%d) are not the %d the checkpoint committed", ns, a.spans)
		}
		if a.through.Seq < 0 {
			rep.add("archives", row, "", "through_seq is negative")
		}
	}
	type orphan struct{ key, why string }
	bad, err := queryRows(ctx, tx, `SELECT ak.action_key, 'an archived key without its intent' FROM archived_keys ak WHERE NOT EXISTS (SELECT 1 FROM intents i WHERE i.action_key = ak.action_key)
		UNION ALL SELECT ak.action_key, 'an archived key that still has a projection row' FROM archived_keys ak JOIN action_index x ON x.action_key = ak.action_key
		UNION ALL SELECT ak.action_key, 'an archived key that still has a payload row' FROM archived_keys ak JOIN payloads p ON p.action_key = ak.action_key

		UNION ALL SELECT '', 'a run of archived events whose numbers hold an event (seq ' || e.seq || ')' FROM pruned_events s JOIN events e ON e.seq BETWEEN s.first_seq AND s.last_seq`,
		nil, func(r *sql.Rows, o *orphan) error { return r.Scan(&o.key, &o.why) })
	for _, o := range bad {
		rep.add("archived_keys", "action_key="+o.key, o.key, "%s", o.why)
	}
	return err
}

// ArchiveProof is what VerifyArchive found.
type ArchiveProof struct {
	File    string `json:"file"`
	Archive int64  `json:"archive_id"`
	Keys    int64  `json:"keys"`
	// Report is the archive file's own verify.
	Report   VerifyReport `json:"report"`
	Problems []Problem    `json:"problems"`
}

// OK reports whether the archive proved itself and is the one named.
func (p ArchiveProof) OK() bool { return p.Report.OK() && len(p.Problems) == 0 }

// VerifyArchive proves that the file at path is the archive a checkpoint
// of this ledger names: it verifies on its own, it is a copy of this
// ledger sealed at the head the checkpoint names, its chain holds every
// run of events the live ledger left in its place, and its facts give
// every archived key the state and digest its stub keeps.
func (s *Store) VerifyArchive(ctx context.Context, path string) (ArchiveProof, error) {
	p := ArchiveProof{File: path}
	add := func(table, row, key, rule string, args ...any) {
		p.Problems = append(p.Problems, Problem{Table: table, Row: row, Key: key, Rule: fmt.Sprintf(rule, args...)})
	}
	a, err := Open(ctx, path, Options{ReadOnly: true, Now: s.now})
	if err != nil {
		return p, err
	}
	defer a.Close()
	if p.Report, err = a.Verify(ctx); err != nil {
		return p, err
	}
	head := p.Report.Head()
	var row *archiveRow
	var spans []span
	var keys []archiveKey
	err = s.readAll(ctx, func(tx *Tx) error {
		archives, err := loadArchives(ctx, tx)
		if err != nil {
			return err
		}
		for i := range archives {
			if archives[i].head.Hash == head.Hash && archives[i].head.Seq == head.Seq {
				row = &archives[i]
			}
		}
		if row == nil {
			return nil
		}
		if spans, err = loadSpans(ctx, tx, "WHERE archive_id = ?", row.id); err != nil {
			return err
		}
		keys, err = queryRows(ctx, tx, `SELECT ak.action_key, i.payload_sha256, ak.state, ak.result, ak.context_sha256 FROM archived_keys ak
			JOIN intents i ON i.action_key = ak.action_key WHERE ak.archive_id = ? ORDER BY ak.action_key`, []any{row.id},
			func(r *sql.Rows, k *archiveKey) error { return r.Scan(&k.key, &k.sha, &k.state, &k.result, &k.ctx) })
		return err
	})
	if err != nil {
		return p, err
	}
	if row == nil {
		add("archives", "", "", "no checkpoint of this ledger names an archive whose head is seq %d %s", head.Seq, head.Hash)
		return p, nil
	}
	p.Archive, p.Keys = row.id, row.keys
	if head.LedgerID != row.ledger {
		add("archives", fmt.Sprint("id=", row.id), "", "the archive is of ledger %s, the checkpoint names %s", head.LedgerID, row.ledger)
	}
	err = a.read(ctx, func(tx *Tx) error {
		hashAt := func(seq int64) (prev, hash string, err error) {
			err = tx.QueryRowContext(ctx, "SELECT prev_hash, hash FROM events WHERE seq = ?", seq).Scan(&prev, &hash)
			if errors.Is(err, sql.ErrNoRows) {
				err = nil
			}
			return
		}
		if _, h, err := hashAt(row.through.Seq); err != nil {
			return err
		} else if row.through.Seq > 0 && h != row.through.Hash {
			add("events", fmt.Sprint("seq=", row.through.Seq), "", "the archive's event %d is not the one the checkpoint copied through", row.through.Seq)
		}
		for _, sp := range spans {
			prev, _, err := hashAt(sp.first)
			if err != nil {
				return err
			}
			_, hash, err := hashAt(sp.last)
			if err != nil {
				return err
			}
			if prev != sp.prev || hash != sp.hash {
				add("pruned_events", fmt.Sprint("first_seq=", sp.first), "", "the archive's events %d..%d are not the run the live ledger keeps in their place", sp.first, sp.last)
			}
		}
		// Every stub's state and digest, from the archive's facts.
		h := sha256.New()
		for _, k := range keys {
			f, err := loadFacts(ctx, tx, k.key)
			if err != nil {
				add("archived_keys", "action_key="+k.key, k.key, "the archive does not hold the key (%v)", err)
				continue
			}
			var sha, cx string
			if err := tx.QueryRowContext(ctx, `SELECT i.payload_sha256, coalesce(pl.context_sha256, '') FROM intents i LEFT JOIN payloads pl ON pl.action_key = i.action_key
				WHERE i.action_key = ?`, k.key).Scan(&sha, &cx); err != nil {
				return err
			}
			got := archiveKey{key: k.key, sha: sha, ctx: cx, state: stateFrom(f.Stage, f.Deadline, row.at), result: f.Result}
			if got != k {
				add("archived_keys", "action_key="+k.key, k.key, "the live stub says %s, the archive's facts say %s", k.state, got.state)
			}
			got.fold(h)
		}
		if hex.EncodeToString(h.Sum(nil)) != row.keysSHA {
			add("archives", fmt.Sprint("id=", row.id), "", "the archive's facts do not reproduce the checkpoint's digest of the archived keys")
		}
		return nil
	})
	return p, err
}
