package ledger

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// archiveFixture fills a ledger with one action in each state that
// matters to archive, all a day old, and one fresh settled action.
func archiveFixture(t *testing.T) (*Store, *clock, map[string]State) {
	t.Helper()
	s, c := openTest(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Auto}, "root")
	must(err)
	_, err = s.SetPolicy(ctx, approvals.Rule{Pattern: "email", Mode: approvals.Approval, TTL: time.Hour}, "root")
	must(err)
	_, err = s.SetPolicy(ctx, approvals.Rule{Pattern: "wipe", Mode: approvals.Deny}, "root")
	must(err)
	want := map[string]State{}
	guard := func(key, kind string) Answer {
		t.Helper()
		a, err := s.Guard(ctx, key, Payload{kind, "t-" + key, "body of " + key}, GuardOptions{Agent: "bot"})
		must(err)
		return a
	}
	for i := range 5 {
		k := fmt.Sprintf("ok-%d", i)
		a := guard(k, "refund")
		_, err := s.Report(ctx, k, a.PermitID, Succeeded, ReportOptions{})
		must(err)
		want[k] = StateSucceeded
	}
	a := guard("failed-1", "refund")
	_, err = s.Report(ctx, "failed-1", a.PermitID, Failed, ReportOptions{})
	must(err)
	want["failed-1"] = StateFailed
	guard("rejected-1", "email")
	_, err = s.Reject(ctx, "rejected-1", "alice", "no")
	must(err)
	want["rejected-1"] = StateRejected
	guard("expired-1", "email")
	guard("denied-1", "wipe")
	want["denied-1"] = StateDenied
	a = guard("recon-1", "refund")
	_, err = s.Report(ctx, "recon-1", a.PermitID, Unknown, ReportOptions{})
	must(err)
	_, err = s.Reconcile(ctx, "recon-1", ResultNotExecuted, "alice", "checked the provider")
	must(err)
	want["recon-1"] = StateReconciled
	// Open work stays: executing (lease running), uncertain, and a
	// conflicting key (settled, but with a logged conflict).
	guard("executing-1", "refund")
	a = guard("uncertain-1", "refund")
	_, err = s.Report(ctx, "uncertain-1", a.PermitID, Unknown, ReportOptions{})
	must(err)
	a = guard("conflicted-1", "refund")
	_, err = s.Report(ctx, "conflicted-1", a.PermitID, Succeeded, ReportOptions{})
	must(err)
	if _, err := s.Guard(ctx, "conflicted-1", Payload{"refund", "t", "another body"}, GuardOptions{Agent: "bot"}); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("conflict: %v", err)
	}
	c.Add(2 * time.Hour) // expired-1 expires
	want["expired-1"] = StateExpired
	c.Add(24 * time.Hour) // executing-1's lease ran out: uncertain
	_, err = s.Guard(ctx, "pending-1", Payload{"email", "t", "b"}, GuardOptions{Agent: "bot"})
	must(err)
	guard("executing-2", "refund")
	// Settled after the cutoff: stays.
	a = guard("fresh-1", "refund")
	_, err = s.Report(ctx, "fresh-1", a.PermitID, Succeeded, ReportOptions{})
	must(err)
	return s, c, want
}

func TestArchiveMovesSettledAndKeepsPromises(t *testing.T) {
	s, c, want := archiveFixture(t)
	before, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "archive-1.db")
	res, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: file, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Keys != len(want) {
		t.Fatalf("archived %d keys, want %d (%v)", res.Keys, len(want), want)
	}
	if res.Through.Seq != before.Seq || res.Through.Hash != before.Hash {
		t.Fatalf("the archive copied through %+v, the live head was %+v", res.Through, before)
	}
	// The live ledger proves itself from the checkpoint, and the archive
	// is the one the checkpoint names.
	if rep, err := s.Verify(ctx, before); err != nil || !rep.OK() {
		t.Fatalf("live verify after archive: %v %+v", err, rep.Problems)
	} else if rep.Events != res.Checkpoint.Seq || rep.ChainHead != res.Checkpoint.Hash {
		t.Fatalf("verify saw head %d %s, the checkpoint is %+v", rep.Events, rep.ChainHead, res.Checkpoint)
	}
	proof, err := s.VerifyArchive(ctx, file)
	if err != nil || !proof.OK() {
		t.Fatalf("verify --archive: %v %+v %+v", err, proof.Report.Problems, proof.Problems)
	}
	if proof.Keys != int64(len(want)) {
		t.Fatalf("the proof names %d keys", proof.Keys)
	}
	// Every archived key keeps its promise: an identical retry gets its
	// final answer, a changed payload is a conflict, status says where
	// its facts went, and nothing re-executes.
	for k, st := range want {
		d, err := s.Status(ctx, k)
		if err != nil || d.State != st || d.Archive == 0 || d.ArchiveFile != file {
			t.Fatalf("status %s: %v state %s archive %d %q, want %s", k, err, d.State, d.Archive, d.ArchiveFile, st)
		}
		kind := map[bool]string{true: "email", false: "refund"}[k == "rejected-1" || k == "expired-1"]
		if k == "denied-1" {
			kind = "wipe"
		}
		a, err := s.Guard(ctx, k, Payload{kind, "t-" + k, "body of " + k}, GuardOptions{Agent: "bot"})
		if err != nil || a.State != st || !a.Replayed || a.PermitID != "" {
			t.Fatalf("retry of archived %s: %v %+v", k, err, a)
		}
		if _, err := s.Guard(ctx, k, Payload{kind, "t-" + k, "changed"}, GuardOptions{Agent: "bot"}); !errors.As(err, new(*ConflictError)) {
			t.Fatalf("changed payload under archived %s: %v", k, err)
		}
		if _, err := s.Approve(ctx, k, "alice", ""); err == nil {
			t.Fatalf("approve of archived %s succeeded", k)
		}
	}
	// Open work and fresh work stay whole.
	for _, k := range []string{"executing-1", "executing-2", "uncertain-1", "conflicted-1", "pending-1", "fresh-1"} {
		d, err := s.Status(ctx, k)
		if err != nil || d.Archive != 0 || !d.Retained {
			t.Fatalf("%s was archived or lost: %v %+v", k, err, d)
		}
	}
	// The conflicts logged above by the changed retries are open work
	// again: verify still proves everything, the checkpoint included.
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify after retries: %v %+v", err, rep.Problems)
	}
	// Export proves the live ledger with the stubs; with the archives,
	// each archived key's line is its archive's, events and all.
	var plain, full bytes.Buffer
	if end, err := s.Export(ctx, &plain); err != nil || !end.ChainVerified {
		t.Fatalf("export after archive: %v %+v", err, end)
	}
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	end, err := s.ExportArchives(ctx, &full, nil)
	if err != nil || !end.ChainVerified || end.Head.Hash != head.Hash {
		t.Fatalf("export --archives: %v %+v", err, end)
	}
	lines := strings.Split(strings.TrimSpace(full.String()), "\n")
	fromArchive := 0
	for _, l := range lines[:len(lines)-1] {
		var e Evidence
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.ArchiveFile != "" {
			fromArchive++
			if e.State != want[e.Key] || e.Events == 0 || !e.ChainVerified {
				t.Fatalf("archived line for %s: %+v", e.Key, e)
			}
		}
	}
	if fromArchive != len(want) || len(lines)-1 != end.Actions || end.Actions != strings.Count(plain.String(), "\n")-1 {
		t.Fatalf("export --archives: %d lines from the archive of %d, %d lines, %d actions; plain export %d lines", fromArchive, len(want), len(lines)-1, end.Actions, strings.Count(plain.String(), "\n")-1)
	}
	// A shell's INSERT OR REPLACE cannot bring an archived key back as a
	// new one (it deletes without firing the delete trigger).
	if _, err := rawDB(t, s.Path()).Exec("INSERT OR REPLACE INTO intents VALUES ('ok-1', ?, 'recorded')", strings.Repeat("a", 64)); err == nil && !onPostgres {
		t.Fatal("INSERT OR REPLACE of an archived key's intent succeeded")
	}
	// The archive is sealed: no agent gets anything from it.
	a, err := Open(ctx, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Guard(ctx, "new-1", Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("guard on a sealed archive: %v", err)
	}
	// Archiving again to the same file is refused; a new run archives
	// what settled since, and both archives prove themselves.
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(time.Hour), To: file, Operator: "alice"}); !errors.Is(err, ErrArchive) {
		t.Fatalf("archive to a named archive: %v", err)
	}
	file2 := filepath.Join(dir, "archive-2.db")
	res2, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(time.Hour), To: file2, Operator: "alice"})
	if err != nil || res2.Keys != 1 { // fresh-1
		t.Fatalf("second archive: %v %+v", err, res2)
	}
	for _, f := range []string{file, file2} {
		if p, err := s.VerifyArchive(ctx, f); err != nil || !p.OK() {
			t.Fatalf("verify --archive %s: %v %+v %+v", f, err, p.Report.Problems, p.Problems)
		}
	}
	if rep, err := s.Verify(ctx, before, res.Checkpoint); err != nil || !rep.OK() {
		t.Fatalf("verify after the second archive: %v %+v", err, rep.Problems)
	}
}

func TestArchiveTamperNamed(t *testing.T) {
	cases := []struct {
		name, sql string
		problem   string
	}{
		{"stub state changed", "UPDATE archived_stubs SET state = 4 WHERE action_key = 'ok-1'", "archived_keys"},
		{"stub removed", "DELETE FROM archived_stubs WHERE action_key = 'ok-1'", "archived_keys"},
		{"run moved", "UPDATE pruned_events SET last_hash = '" + zeroHash + "' WHERE first_seq = (SELECT min(first_seq) FROM pruned_events)", "pruned_events"},
		{"run dropped", "DELETE FROM pruned_events WHERE first_seq = (SELECT min(first_seq) FROM pruned_events)", "pruned_events"},
	}
	sqliteOnly(t) // the triggers it lifts are SQLite's
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c, _ := archiveFixture(t)
			if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: filepath.Join(t.TempDir(), "a.db"), Operator: "alice"}); err != nil {
				t.Fatal(err)
			}
			raw := rawDB(t, s.Path())
			// As an agent with the file would: around the triggers.
			for _, tr := range []string{"archived_stubs_no_update", "archived_stubs_no_delete", "pruned_events_no_update", "pruned_events_no_delete"} {
				if _, err := raw.Exec("DROP TRIGGER " + tr); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := raw.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || p.Table == tc.problem
			}
			if rep.OK() || !found {
				t.Fatalf("verify after %s: %+v", tc.name, rep.Problems)
			}
		})
	}
}

func TestArchiveOfAnotherFileRefused(t *testing.T) {
	s, c, _ := archiveFixture(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now(), To: other, Operator: "alice"}); !errors.Is(err, ErrArchive) {
		t.Fatalf("archive over another file: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "keep me" {
		t.Fatalf("the other file changed: %q", b)
	}
	// Another ledger's archive is not proven as this one's.
	s2, c2, _ := archiveFixture(t)
	f2 := filepath.Join(dir, "other-archive.db")
	if _, err := s2.Archive(ctx, ArchiveOptions{SettledBefore: c2.Now(), To: f2, Operator: "alice"}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.VerifyArchive(ctx, f2); err != nil || p.OK() {
		t.Fatalf("another ledger's archive proved as this one's: %v %+v", err, p)
	}
}

// archiveChild archives everything settled to file, saying "ready" once
// the ledger is open; the parent kills it at a random moment.
func archiveChild(path, file string) int {
	s, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: time.Now().Add(time.Hour), To: file, Operator: "ops"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}

// TestArchiveKilled kills archive processes at random moments (copying,
// sealing, inside the checkpoint's transaction) and checks after each
// that the ledger proves itself and every key still answers with its
// state, live or archived; then a run to the end archives them all.
func TestArchiveKilled(t *testing.T) {
	sqliteOnly(t)
	rounds, keys := 12, 400
	if testing.Short() {
		rounds, keys = 5, 200
	}
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "job", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	want := map[string]State{}
	for i := range keys {
		k := fmt.Sprintf("job-%d", i)
		a, err := s.Guard(ctx, k, Payload{"job", "t", k}, GuardOptions{Agent: "bot"})
		if err != nil {
			t.Fatal(err)
		}
		want[k] = StateExecuting
		if i%5 != 0 { // one in five stays executing: never archived
			if _, err := s.Report(ctx, k, a.PermitID, Succeeded, ReportOptions{}); err != nil {
				t.Fatal(err)
			}
			want[k] = StateSucceeded
		}
	}
	s.Close()
	file := filepath.Join(t.TempDir(), "archive.db")
	check := func(when string) (archived int) {
		t.Helper()
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
			t.Fatalf("verify %s: %v %+v", when, err, rep.Problems)
		}
		for k, st := range want {
			d, err := s.Status(ctx, k)
			if err != nil || d.State != st {
				t.Fatalf("%s: key %s lost or changed: %v %s, want %s", when, k, err, d.State, st)
			}
			if d.Archive != 0 {
				archived++
			}
		}
		return archived
	}
	rng := rand.New(rand.NewPCG(5, 6))
	killed := 0
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TOLLGATE_CHILD=archive", "TOLLGATE_CHILD_DB="+path, "TOLLGATE_CHILD_ARCHIVE="+file)
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("archive child: %q %s", sc.Text(), stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
		}
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else if cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("round %d: archive failed by itself: %s", round, stderr.String())
		}
		check(fmt.Sprintf("after round %d", round))
		if _, err := os.Stat(file); err == nil {
			s, _ := Open(ctx, path, Options{ReadOnly: true})
			p, err := s.VerifyArchive(ctx, file)
			s.Close()
			switch {
			case err != nil:
				t.Fatalf("round %d: the archive file left behind cannot be read: %v", round, err)
			case p.Archive != 0 && !p.OK():
				t.Fatalf("round %d: the archive the checkpoint names does not prove itself: %+v %+v", round, p.Report.Problems, p.Problems)
			case p.Archive != 0:
				// The checkpoint committed before the kill: the file is
				// named, and the next round needs a file of its own.
				file = filepath.Join(t.TempDir(), "archive.db")
			}
			// Else an unfinished archive no checkpoint names: the next
			// round replaces it.
		}
	}
	if killed == 0 {
		t.Fatal("no archive run was killed: the test tested nothing")
	}
	// Run to the end: everything settled is archived, nothing else.
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: time.Now().Add(time.Hour), To: file, Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	settled := 0
	for _, st := range want {
		if st == StateSucceeded {
			settled++
		}
	}
	if n := check("at the end"); n != settled {
		t.Fatalf("%d keys archived, want the %d settled ones", n, settled)
	}
	t.Logf("%d of %d runs killed", killed, rounds)
}

// TestArchivedLedgerCopiesToPostgres: migrate --from carries an archived
// ledger whole (stubs, runs, checkpoints, evidence set aside): the copy
// proves the same head, still replays an archived key, and proves the
// archive file.
func TestArchivedLedgerCopiesToPostgres(t *testing.T) {
	if onPostgres {
		t.Skip("runs once, in the SQLite pass: it makes its own PostgreSQL database")
	}
	s, c, want := archiveFixture(t)
	file := filepath.Join(t.TempDir(), "archive.db")
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: file, Operator: "alice"}); err != nil {
		t.Fatal(err)
	}
	dst := pgtest.DB(t)
	h, err := CopyToPostgres(ctx, s.Path(), dst)
	if err != nil {
		t.Fatal(err)
	}
	if live, _ := s.Head(ctx); h.Seq != live.Seq || h.Hash != live.Hash {
		t.Fatalf("the copy's head %+v, the source's %+v", h, live)
	}
	pg, err := Open(ctx, dst, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	a, err := pg.Guard(ctx, "ok-1", Payload{"refund", "t-ok-1", "body of ok-1"}, GuardOptions{Agent: "bot"})
	if err != nil || a.State != want["ok-1"] || !a.Replayed || a.PermitID != "" {
		t.Fatalf("retry of an archived key on the copy: %v %+v", err, a)
	}
	if p, err := pg.VerifyArchive(ctx, file); err != nil || !p.OK() {
		t.Fatalf("verify --archive on the copy: %v %+v %+v", err, p.Report.Problems, p.Problems)
	}
	// Archiving goes on from the copy: fresh-1 settled since.
	b := filepath.Join(t.TempDir(), "b.db")
	if res, err := pg.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(time.Hour), To: b, Operator: "alice"}); err != nil || res.Keys != 1 {
		t.Fatalf("archive on the PostgreSQL copy: %v %+v", err, res)
	}
	for _, f := range []string{file, b} {
		if p, err := pg.VerifyArchive(ctx, f); err != nil || !p.OK() {
			t.Fatalf("verify --archive %s on the copy: %v %+v %+v", f, err, p.Report.Problems, p.Problems)
		}
	}
	if rep, err := pg.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify of the copy after its own archive: %v %+v", err, rep.Problems)
	}
}

// TestStubsCompactedInPlace: archived_stubs stores each archived key's
// state and result as small integers and archived_keys is a view over
// it. Stubs of every state and result, inserted through the view, read
// back through it exactly as they were written and are stored as
// integers, and a word outside the vocabulary is refused with the rule's
// name, not stored as something else.
func TestStubsCompactedInPlace(t *testing.T) {
	sqliteOnly(t) // the stubs' storage is SQLite's
	s, _ := openTest(t)
	db := rawDB(t, s.Path())
	ctxHash := strings.Repeat("ab", 32)
	var n int
	var want []string
	for _, st := range []string{"denied", "rejected", "expired", "succeeded", "failed", "reconciled"} {
		for _, res := range []string{"", "executed", "not-executed"} {
			n++
			c := ""
			if n%2 == 0 {
				c = ctxHash
			}
			if _, err := db.Exec("INSERT INTO archived_keys(action_key, archive_id, state, result, context_sha256) VALUES (?, ?, ?, ?, ?)",
				fmt.Sprintf("k:%02d", n), n%3+1, st, res, c); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("k:%02d|%d|%s|%s|%s", n, n%3+1, st, res, c))
		}
	}
	stubs := func(db *sql.DB) []string {
		rows, err := db.Query("SELECT action_key || '|' || archive_id || '|' || state || '|' || result || '|' || context_sha256 FROM archived_keys ORDER BY action_key")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	if got := stubs(s.r); !slices.Equal(got, want) {
		t.Fatalf("stubs through the view:\n%v\nwritten:\n%v", got, want)
	}
	var ints int
	if err := s.r.QueryRow("SELECT count(*) FROM archived_stubs WHERE typeof(state) = 'integer' AND typeof(result) = 'integer'").Scan(&ints); err != nil || ints != 18 {
		t.Fatalf("%d of 18 stubs store integers (%v)", ints, err)
	}
	for _, bad := range [][2]string{{"pending", ""}, {"succeeded", "done"}} {
		_, err := s.w.Exec("INSERT INTO archived_keys(action_key, archive_id, state, result) VALUES ('k:bad', 1, ?, ?)", bad[0], bad[1])
		if err == nil || !strings.Contains(err.Error(), "archived_keys: ") {
			t.Fatalf("stub %v stored or refused without naming the rule: %v", bad, err)
		}
	}
}
