package ledger

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/jsonout"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Evidence is one action's exported record: what was decided, what the
// worker reported, the safe references, and whether its events prove it.
type Evidence struct {
	Detail
	Redaction string `json:"redaction"` // retained, redacted or external
	// ChainVerified says this action's events recompute to their hashes
	// and commit exactly the fact rows the line was made from; the chain's
	// links are proven once for all, on export's last line.
	ChainVerified bool   `json:"chain_verified"`
	Events        int    `json:"events"`
	LastEventHash string `json:"last_event_hash,omitempty"`
	LatencyMS     *int64 `json:"latency_ms,omitempty"`
}

// ExportEnd is export's last line: the head the evidence was read at,
// how much was read, and whether the pass proved it.
type ExportEnd struct {
	Head    Head  `json:"head"`
	Actions int   `json:"actions"`
	Events  int64 `json:"events"`
	// ChainVerified is true when every line's evidence is proven by its
	// events, every event recomputes to its hash, and the events link
	// from the first to the head row. The engine's own check, the
	// projection, signatures and witnessed heads are verify's.
	ChainVerified bool `json:"chain_verified"`
	// Problems names what did not hold, the first exportProblemCap of
	// them; ProblemCount counts them all.
	Problems     []Problem `json:"problems"`
	ProblemCount int       `json:"problem_count"`
}

// exportPage is how many keys Export reads per round of range scans: few
// enough that memory stays flat, enough that the queries' cost is shared.
// A variable so a test can make pages of one or two keys.
var exportPage = 1000

// exportProblemCap bounds the problems the last line names, so a ledger
// broken everywhere still exports in constant memory.
const exportProblemCap = 100

// Export writes one JSON line of evidence per action, in key order, then
// the ExportEnd line, every untrusted character escaped (write). It reads one snapshot in a single pass: per page of
// keys, one range scan of each fact table and of the events, never a
// query per key (except to prove a signed vote). While it streams it
// proves what it prints: each line's fact rows against the events that
// commit them, each event's hash, and the chain's links (a keyed digest of
// every link, in constant memory, whatever the order events are read in).
func (s *Store) Export(ctx context.Context, w io.Writer) (ExportEnd, error) {
	return s.ExportWith(ctx, w, nil)
}

// ExportWith is Export, calling progress (when not nil) with the number
// of actions written after each page, so a long run can say how far it is.
func (s *Store) ExportWith(ctx context.Context, w io.Writer, progress func(actions int)) (ExportEnd, error) {
	return s.export(ctx, w, progress, func(x *exporter) {})
}

// export runs one exporter over this ledger, set up by setup.
func (s *Store) export(ctx context.Context, w io.Writer, progress func(actions int), setup func(*exporter)) (ExportEnd, error) {
	var end ExportEnd
	err := s.readAll(ctx, func(tx *Tx) error {
		end = ExportEnd{}
		x, err := newExporter(ctx, tx, w)
		if err != nil {
			return err
		}
		x.progress = progress
		setup(x)
		if err := x.run(ctx, tx); err != nil {
			return err
		}
		end = x.end
		return nil
	})
	return end, err
}

// ExportArchives is Export with the archives this ledger's checkpoints
// name: for each archived key, the line its archive proves (with the
// archive's file and id) instead of the live ledger's stub; then every
// live key. The last line is the live ledger's head; a problem in an
// archive (one that does not prove itself, is missing, or is not the one
// the checkpoint names) is named there too, with the file.
func (s *Store) ExportArchives(ctx context.Context, w io.Writer, progress func(actions int)) (ExportEnd, error) {
	type named struct {
		row  archiveRow
		keys map[string]bool
	}
	var archives []named
	err := s.readAll(ctx, func(tx *Tx) error {
		rows, err := loadArchives(ctx, tx)
		archives = archives[:0]
		for _, r := range rows {
			keys, err := queryRows(ctx, tx, "SELECT action_key FROM archived_keys WHERE archive_id = ?", []any{r.id},
				func(r *sql.Rows, k *string) error { return r.Scan(k) })
			if err != nil {
				return err
			}
			n := named{row: r, keys: map[string]bool{}}
			for _, k := range keys {
				n.keys[k] = true
			}
			archives = append(archives, n)
		}
		return err
	})
	if err != nil {
		return ExportEnd{}, err
	}
	var problems []Problem
	written := 0
	archived := map[string]bool{}
	for _, a := range archives {
		for k := range a.keys {
			archived[k] = true
		}
		bad := func(rule string, args ...any) {
			problems = append(problems, Problem{Table: "archives", Row: fmt.Sprint("id=", a.row.id), Rule: a.row.file + ": " + fmt.Sprintf(rule, args...)})
		}
		as, err := Open(ctx, a.row.file, Options{ReadOnly: true, Existing: true})
		if err != nil {
			bad("cannot be opened (%v): its keys' lines are the live stubs", err)
			for k := range a.keys {
				delete(archived, k)
			}
			continue
		}
		end, err := as.export(ctx, w, nil, func(x *exporter) {
			x.keep = func(k string) bool { return a.keys[k] }
			x.archive.id, x.archive.file = a.row.id, a.row.file
		})
		as.Close()
		if err != nil {
			return ExportEnd{}, err
		}
		written += end.Actions
		if end.Head.Seq != a.row.head.Seq || end.Head.Hash != a.row.head.Hash {
			bad("its head is event %d %s, the checkpoint names %d %s", end.Head.Seq, end.Head.Hash, a.row.head.Seq, a.row.head.Hash)
		}
		if !end.ChainVerified {
			bad("does not prove itself (%d problems)", end.ProblemCount)
		}
		if progress != nil {
			progress(written)
		}
	}
	end, err := s.export(ctx, w, func(n int) {
		if progress != nil {
			progress(written + n)
		}
	}, func(x *exporter) {
		x.keep = func(k string) bool { return !archived[k] }
		x.end.Problems, x.end.ProblemCount = problems, len(problems)
	})
	end.Actions += written
	return end, err
}

type exporter struct {
	w        *bufio.Writer
	progress func(actions int)
	end      ExportEnd
	reg      *registry
	link     *linkDigest
	// keep, when set, chooses the keys whose lines are written (every
	// key's events are still proven and linked); archive names the
	// archive file the lines come from (ExportArchives).
	keep    func(key string) bool
	archive struct {
		id   int64
		file string
	}
}

func newExporter(ctx context.Context, tx *Tx, w io.Writer) (*exporter, error) {
	x := &exporter{w: bufio.NewWriterSize(w, 64<<10)}
	var err error
	if x.end.Head.LedgerID, err = ledgerID(ctx, tx); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&x.end.Head.Seq, &x.end.Head.Hash); err != nil {
		return nil, err
	}
	if x.reg, err = loadRegistry(ctx, tx); err != nil {
		return nil, err
	}
	if x.link, err = newLinkDigest(); err != nil {
		return nil, err
	}
	// A run of archived events links like one event spanning its seqs.
	spans, err := loadSpans(ctx, tx, "")
	for _, sp := range spans {
		x.link.fold(sp.last, sp.hash)
		x.link.fold(sp.first-1, sp.prev)
		x.end.Events += sp.last - sp.first + 1
	}
	return x, err
}

// exportBatch is one page as the reader hands it to the writer: the keys'
// rows, their details (proofs of signed votes included) and the events
// of no key on the page.
type exportBatch struct {
	keys    []*keyRows
	details []Detail
	loose   []Event
	raw     []rawEvent // loose's
	err     error
}

// run streams the pages. Reading (the queries, and the votes' proofs,
// which query too) and writing (proving, encoding) overlap: a goroutine
// reads the next page while this one proves and writes the last, so a
// two-core machine exports at the speed of the slower half. Only the
// reader touches the transaction (the writer reads only its clock
// value, fixed when it began).
func (x *exporter) run(ctx context.Context, tx *Tx) error {
	ctx, cancel := context.WithCancel(ctx)
	pages := make(chan exportBatch, 1)
	// The reader must be done with the transaction before it ends: on any
	// return, stop it and wait for it to close the channel.
	defer func() {
		cancel()
		for range pages {
		}
	}()
	go func() {
		defer close(pages)
		after, first := "", true
		for {
			b, err := x.read(ctx, tx, after, first)
			if err != nil {
				b.err = err
			}
			select {
			case pages <- b:
			case <-ctx.Done():
				return
			}
			if err != nil || len(b.keys) < exportPage {
				return
			}
			after, first = b.keys[len(b.keys)-1].key, false
		}
	}()
	for b := range pages {
		if b.err != nil {
			return b.err
		}
		for i, k := range b.keys {
			if !k.needsProofs() {
				detailFrom(k, tx.now, &b.details[i])
			}
			if err := x.line(k, b.details[i]); err != nil {
				return err
			}
		}
		for i, e := range b.loose {
			x.event(e, b.raw[i])
		}
		if x.progress != nil {
			x.progress(x.end.Actions)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	x.finish()
	if x.archive.file == "" { // an archive's head goes into the live end line's checks
		if err := x.write(x.end); err != nil {
			return err
		}
	}
	return x.w.Flush()
}

// read reads the page of keys after after (the first page when first),
// and the events from just after the previous page up to this page's
// last key (after the last page, all that remain): every event is read
// once, those of keys with no intent (ledger-wide facts, fenced calls)
// included, so the links are proven end to end.
func (x *exporter) read(ctx context.Context, tx *Tx, after string, first bool) (exportBatch, error) {
	var b exportBatch
	var err error
	if first {
		b.keys, err = loadKeyRows(ctx, tx, "1 = 1", nil, exportPage)
	} else {
		b.keys, err = loadKeyRows(ctx, tx, "i.action_key > ?", []any{after}, exportPage)
	}
	if err != nil {
		return b, err
	}
	where, args := "action_key > ?", []any{after}
	switch n := len(b.keys); {
	case first && n == 0:
		where, args = "1 = 1", nil
	case first:
		where, args = "action_key <= ?", []any{b.keys[n-1].key}
	case n > 0:
		where, args = "action_key > ? AND action_key <= ?", []any{after, b.keys[n-1].key}
	}
	byKey := pageKeys(b.keys)
	if err := scanEvents(ctx, tx, where, args, func(e Event, r rawEvent) error {
		if !attach(byKey, e, r) {
			b.loose, b.raw = append(b.loose, e), append(b.raw, r)
		}
		return nil
	}); err != nil {
		return b, err
	}
	// Only keys with something signed need the transaction to be shown
	// (their proofs are read); the writer builds the rest, which keeps the
	// reader, the slower half, to the queries.
	b.details = make([]Detail, len(b.keys))
	for i, k := range b.keys {
		if k.needsProofs() {
			detailFrom(k, tx.now, &b.details[i])
			if err := decisionProofs(ctx, tx, &b.details[i], x.reg); err != nil {
				return b, err
			}
			b.details[i].dropForgedVotes()
		}
	}
	return b, nil
}

// event counts one event into the chain's proof: its place, its hash, its
// link.
func (x *exporter) event(e Event, r rawEvent) {
	x.end.Events++
	if e.Seq < 1 || e.Seq > x.end.Head.Seq {
		x.problem("events", fmt.Sprintf("seq=%d", e.Seq), e.ActionKey, "beyond the chain head row (seq %d)", x.end.Head.Seq)
	}
	f := factRef{Table: e.FactTable, Row: e.FactRow, SHA256: e.FactSHA256}
	if h := eventHash(r.hv, e.PrevHash, e.Seq, e.ActionKey, e.Type, e.Actor, r.detail, e.At.UnixMilli(), f); h != e.Hash {
		x.problem("events", fmt.Sprintf("seq=%d", e.Seq), e.ActionKey, "hash does not match the event's contents")
	}
	x.link.add(e.Seq, e.Hash, e.PrevHash)
}

// line proves and writes one action's evidence.
func (x *exporter) line(k *keyRows, d Detail) error {
	before := x.end.ProblemCount
	for i := range k.events {
		x.event(k.events[i], k.raw[i])
	}
	x.prove(k)
	ok := x.end.ProblemCount == before
	if x.keep != nil && !x.keep(k.key) {
		return nil
	}
	d.dropForged(k.events)
	if x.archive.file != "" {
		d.Archive, d.ArchiveFile = x.archive.id, x.archive.file
	}
	e := Evidence{Detail: d, ChainVerified: ok, Events: len(k.events), Redaction: "retained"}
	switch {
	case !d.Retained:
		e.Redaction = "external"
	case d.Redacted:
		e.Redaction = "redacted"
	}
	if n := len(k.events); n > 0 {
		e.LastEventHash = k.events[n-1].Hash
	}
	for _, r := range d.Reports {
		if r.Kind == "accepted" {
			l := r.Latency
			e.LatencyMS = &l
		}
	}
	x.end.Actions++
	return x.write(e)
}

// write writes one line. Every string in it is what an agent or operator
// typed: characters a terminal would act on or hide (C0, DEL, C1, bidi
// and zero-width) are written as \uXXXX, which a JSON parser reads back
// as the same character.
func (x *exporter) write(v any) error {
	b, err := jsonout.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := x.w.Write(safetext.EscapeJSON(b)); err != nil {
		return err
	}
	return x.w.WriteByte('\n')
}

// prove checks one key's rows against its events: every fact row of the
// key is committed by exactly one of its events with the row's content
// hash, and every row an event commits is there.
func (x *exporter) prove(k *keyRows) {
	committed := map[string]string{}
	for _, e := range k.events {
		if e.FactTable == "" || keyTableNamed(e.FactTable) == nil {
			continue
		}
		id := e.FactTable + "\x00" + e.FactRow
		if _, dup := committed[id]; dup {
			x.problem("events", fmt.Sprintf("seq=%d", e.Seq), k.key, "commits %s row %s a second time", e.FactTable, e.FactRow)
		}
		committed[id] = e.FactSHA256
	}
	for i := range keyTables {
		t := &keyTables[i]
		for _, r := range k.facts[t.name] {
			ref := t.ref(r)
			sha, ok := committed[t.name+"\x00"+ref.Row]
			switch {
			case !ok:
				x.problem(t.name, t.id+"="+ref.Row, k.key, "no event of this key commits the row")
			case sha != ref.SHA256:
				x.problem(t.name, t.id+"="+ref.Row, k.key, "the row's content differs from what its event committed")
			}
			delete(committed, t.name+"\x00"+ref.Row)
		}
	}
	for id := range committed {
		table, row, _ := strings.Cut(id, "\x00")
		x.problem(table, keyTableNamed(table).id+"="+row, k.key, "an event commits this row and it is gone")
	}
	if r, t := k.one("payloads"); r != nil && r.str(t, "payload_sha256") != k.sha256 {
		x.problem("intents", "action_key="+k.key, k.key, "the intent's digest differs from its payload row's")
	}
}

func (x *exporter) problem(table, row, key, rule string, args ...any) {
	x.end.ProblemCount++
	if len(x.end.Problems) < exportProblemCap {
		x.end.Problems = append(x.end.Problems, Problem{Table: table, Row: row, Key: key, Rule: fmt.Sprintf(rule, args...)})
	}
}

// finish checks the count and the links against the head row.
func (x *exporter) finish() {
	h := x.end.Head
	if x.end.Events != h.Seq {
		x.problem("events", "", "", "%d events read, but the chain head row names seq %d", x.end.Events, h.Seq)
	}
	if !x.link.closes(h.Seq, h.Hash) {
		x.problem("events", "", "", "the events do not link one to the next from the first to the head row")
	}
	if x.end.Problems == nil {
		x.end.Problems = []Problem{}
	}
	x.end.ChainVerified = x.end.ProblemCount == 0
}

// linkDigest proves a chain's links without holding the chain: events
// arrive in key order, not chain order. For each event it folds in the
// pair (seq, hash) and the pair (seq-1, prev_hash), each through HMAC
// under a key drawn at random for this export. With seqs distinct and
// every hash recomputed, each (seq-1, prev_hash) matches the (seq-1, hash)
// of the event before it exactly when all pairs cancel but the two ends,
// (0, the zero hash) and (head seq, head hash). A ledger edited beforehand
// cannot be made to cancel without the key, which exists only in this
// process.
type linkDigest struct {
	mac hash.Hash
	acc [sha256.Size]byte
	buf []byte
}

func newLinkDigest() (*linkDigest, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &linkDigest{mac: hmac.New(sha256.New, key)}, nil
}

func (l *linkDigest) fold(seq int64, h string) {
	l.mac.Reset()
	l.buf = binary.BigEndian.AppendUint64(l.buf[:0], uint64(seq))
	l.buf = append(l.buf, h...)
	l.mac.Write(l.buf)
	sum := l.mac.Sum(l.buf[:0])
	for i := range l.acc {
		l.acc[i] ^= sum[i]
	}
}

func (l *linkDigest) add(seq int64, h, prev string) {
	l.fold(seq, h)
	l.fold(seq-1, prev)
}

// closes reports whether everything folded in cancels but the chain's ends.
func (l *linkDigest) closes(headSeq int64, headHash string) bool {
	acc := l.acc
	if headSeq > 0 {
		l.fold(headSeq, headHash)
		l.fold(0, zeroHash)
	}
	ok := l.acc == [sha256.Size]byte{}
	l.acc = acc
	return ok
}

// Backup writes a consistent copy of the live ledger to dest, while
// other processes keep writing, and returns the head the copy holds. How
// the copy is made is the engine's (SQLite: VACUUM INTO a temporary file,
// synced and linked into place, so a backup killed midway leaves nothing
// at dest); an existing dest is never replaced.
func (s *Store) Backup(ctx context.Context, dest string) (Head, error) {
	// The head is read before the copy: the copy's snapshot is the same
	// or later, so the head is on its chain.
	h, err := s.Head(ctx)
	if err != nil {
		return Head{}, err
	}
	if err := s.eng.Backup(ctx, dest); err != nil {
		return Head{}, err
	}
	return h, nil
}
