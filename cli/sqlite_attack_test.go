package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// The attacks in this file are played as the guarded agent would play
// them on a host set up as docs/operators.md says (an anchor and a shared
// witness fixed at build time, both outside the agent's reach): a shell,
// the ledger file, a sqlite3 shell and its own environment, no operator
// key. Each asks whether guard ever exits 0 for what no operator
// approved, and whether verify notices.

// anchoredHost is one such host: the anchored build, a ledger whose only
// operator is alice (listed in the anchor) and the shared witness's
// folder made by the installer.
type anchoredHost struct {
	bin, db, anchor, witness string
}

func newAnchoredHost(t *testing.T) *anchoredHost {
	t.Helper()
	sqliteOnly(t)
	bin, anchor, witness := anchoredBinary(t)
	h := &anchoredHost{bin: bin, db: newDB(t), anchor: anchor, witness: witness}
	pub := jsonOf(t, h.run(t, nil, "operator", "init", "--json"))["public_key"].(string)
	os.MkdirAll(filepath.Dir(anchor), 0o755)
	if err := os.WriteFile(anchor, []byte("alice "+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(anchor) })
	os.MkdirAll(filepath.Dir(witness), 0o755)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(witness)) })
	want(t, h.run(t, nil, "operators", "add", "alice", pub), cli.ExitOK)
	return h
}

func (h *anchoredHost) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runBin(t, h.bin, h.db, "", env, args...)
}

// usedApproval walks the honest path: the agent asks, alice approves, the
// agent keeps a copy of the ledger taken after the approval and before
// its permit, gets the permit, and alice's verify then witnesses the head.
// It returns the saved copy.
func (h *anchoredHost) usedApproval(t *testing.T, key string) string {
	t.Helper()
	want(t, h.run(t, nil, guardArgs(key)...), cli.ExitRetry)
	want(t, h.run(t, nil, "approve", key), cli.ExitOK)
	saved := filepath.Join(t.TempDir(), "saved.db")
	want(t, h.run(t, nil, "backup", saved), cli.ExitOK)
	want(t, h.run(t, nil, guardArgs(key)...), cli.ExitOK)
	want(t, h.run(t, nil, "verify"), cli.ExitOK)
	return saved
}

// restoreFile puts the bytes of from at path, the WAL and its index gone.
func restoreFile(t *testing.T, from, path string) {
	t.Helper()
	for _, sfx := range []string{"", "-wal", "-shm"} {
		os.Remove(path + sfx)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// lastWitnessed is the event number of the shared witness's last line.
func lastWitnessed(t *testing.T, witness string) int64 {
	t.Helper()
	b, err := os.ReadFile(witness)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var h struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &h); err != nil {
		t.Fatal(err)
	}
	return h.Seq
}

// TestRestoredCopyUnderTheAgentsOwnNames: the copy the agent saved before
// its permit, put back at the operator's path, at a path of its own
// (TOLLGATE_DB), or behind a symlink at its own path, with its own
// XDG_STATE_HOME witness: each is refused, since guard reads the shared
// witness fixed at build time and matches heads by ledger id, not path.
func TestRestoredCopyUnderTheAgentsOwnNames(t *testing.T) {
	h := newAnchoredHost(t)
	saved := h.usedApproval(t, "k:once")
	own := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + filepath.Join(own, "state")}
	elsewhere := filepath.Join(own, "elsewhere.db")
	restoreFile(t, saved, elsewhere)
	link := filepath.Join(own, "link.db")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{elsewhere, link} {
		r := runBin(t, h.bin, path, "", env, guardArgs("k:once")...)
		want(t, r, cli.ExitNotPermitted)
		if !strings.Contains(r.stdout, "rolled back or restored") {
			t.Fatalf("guard on the copy at %s: %s", filepath.Base(path), r.stdout)
		}
	}
	restoreFile(t, saved, h.db)
	want(t, h.run(t, env, guardArgs("k:once")...), cli.ExitNotPermitted)
}

// TestRestoredCopyWithAForgedArchiveRun: the restored copy is refused
// because the witnessed head's event is missing. An archive leaves, in
// pruned_events, runs of events it moved out, and guard takes a head
// witnessed inside a run as witnessed. pruned_events accepts INSERT (its
// triggers stop only UPDATE and DELETE), so one line from a sqlite3
// shell, no trigger dropped and no hash computed, makes the missing head
// "archived" and the rollback invisible to guard.
func TestRestoredCopyWithAForgedArchiveRun(t *testing.T) {
	h := newAnchoredHost(t)
	saved := h.usedApproval(t, "k:once")
	seq := lastWitnessed(t, h.witness)
	restoreFile(t, saved, h.db)
	want(t, h.run(t, nil, guardArgs("k:once")...), cli.ExitNotPermitted)
	shell(t, h.db, fmt.Sprintf(`INSERT INTO pruned_events(first_seq, last_seq, first_prev, last_hash, archive_id)
		VALUES (%d, %d, printf('%%064d', 0), printf('%%064d', 0), 1)`, seq-1, seq+1))
	r := h.run(t, nil, guardArgs("k:once")...)
	if r.code == cli.ExitOK {
		t.Fatalf("a second permit for one approval: %s", r.stdout)
	}
	want(t, r, cli.ExitNotPermitted)
	want(t, h.run(t, nil, "verify"), cli.ExitError)
}

// TestWALRemovedUnderAnOpenReader: the agent holds a read transaction
// open in a sqlite3 shell, so the permit stays in the WAL when guard
// exits; after alice's verify witnessed the head it kills the shell and
// deletes the WAL and its index, which silently drops the permit from
// the file (a rollback that needs no copy). guard refuses, and verify
// names it.
func TestWALRemovedUnderAnOpenReader(t *testing.T) {
	h := newAnchoredHost(t)
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 is not on PATH")
	}
	want(t, h.run(t, nil, guardArgs("k:wal")...), cli.ExitRetry)
	want(t, h.run(t, nil, "approve", "k:wal"), cli.ExitOK)
	reader := exec.Command(sqlite3, h.db)
	in, err := reader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Process.Kill(); reader.Wait() })
	io.WriteString(in, "BEGIN; SELECT 'held', count(*) FROM events;\n")
	buf := make([]byte, 64)
	if n, err := out.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "held") {
		t.Fatalf("the reader: %q %v", buf[:n], err)
	}
	want(t, h.run(t, nil, guardArgs("k:wal")...), cli.ExitOK)
	want(t, h.run(t, nil, "verify"), cli.ExitOK)
	if fi, err := os.Stat(h.db + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the permit is not in the WAL: %v", err)
	}
	reader.Process.Kill()
	reader.Wait()
	os.Remove(h.db + "-wal")
	os.Remove(h.db + "-shm")
	r := h.run(t, nil, guardArgs("k:wal")...)
	want(t, r, cli.ExitNotPermitted)
	if !strings.Contains(r.stdout, "rolled back or restored") {
		t.Fatalf("guard after the WAL was removed: %s", r.stdout)
	}
	want(t, h.run(t, nil, "verify"), cli.ExitError)
}

// TestSwapSeenByAVerifyOnlyWitness: a host whose shared witness exists
// but whose anchor is not installed yet. SPEC 7: guard refuses a permit
// when the witness shows another ledger at a witnessed path. Operators
// who only run verify feed the witness heads with no path (verify's head
// has none), so a ledger of the agent's own swapped in at the path, with
// an auto rule nobody signed, is not seen as a swap.
func TestSwapSeenByAVerifyOnlyWitness(t *testing.T) {
	sqliteOnly(t)
	bin, _, witness := anchoredBinary(t)
	db := newDB(t)
	os.MkdirAll(filepath.Dir(witness), 0o755)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(witness)) })
	run := func(path string, args ...string) result { return runBin(t, bin, path, "", nil, args...) }
	pub := jsonOf(t, run(db, "operator", "init", "--json"))["public_key"].(string)
	want(t, run(db, "operators", "add", "alice", pub), cli.ExitOK)
	want(t, run(db, guardArgs("k:real")...), cli.ExitRetry)
	want(t, run(db, "verify"), cli.ExitOK)

	own := filepath.Join(t.TempDir(), "own.db")
	want(t, run(own, "policy", "set", "*", "--mode", "auto", "--operator", "mallory"), cli.ExitOK)
	restoreFile(t, own, db)
	r := run(db, guardArgs("k:swapped")...)
	if r.code == cli.ExitOK {
		t.Fatalf("a permit from a ledger swapped in at a witnessed path: %s", r.stdout)
	}
	want(t, r, cli.ExitNotPermitted)
}

// TestSecondCLIProcessRaces runs the commands that write one key at once,
// each its own process: guards, alice's approval, bob's rejection, a
// migrate. Whatever order the lock gives them, one decision stands, at
// most one guard exits 0, and only after the approval; verify passes.
// The same operator approving twice at once toward a quorum of two
// counts once. Archive racing retries of a settled key gives none of them
// a new permit.
func TestSecondCLIProcessRaces(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	alicePub := jsonOf(t, run(t, db, "", "operator", "init", "--json"))["public_key"].(string)
	bobKey := filepath.Join(t.TempDir(), "bob")
	bobPub := jsonOf(t, run(t, db, "", "operator", "init", "--key", bobKey, "--json"))["public_key"].(string)
	want(t, run(t, db, "", "operators", "add", "alice", alicePub), cli.ExitOK)
	want(t, run(t, db, "", "operators", "add", "bob", bobPub), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "two.*", "--mode", "approval", "--approvers", "2"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "auto.*", "--mode", "auto"), cli.ExitOK)

	all := func(cmds ...[]string) []result {
		out := make([]result, len(cmds))
		var wg sync.WaitGroup
		for i, c := range cmds {
			wg.Add(1)
			go func() { defer wg.Done(); out[i] = run(t, db, "", c...) }()
		}
		wg.Wait()
		return out
	}
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for i := range rounds {
		key := fmt.Sprintf("k:race-%d", i)
		want(t, run(t, db, "", guardArgs(key)...), cli.ExitRetry)
		cmds := [][]string{{"approve", key}, {"reject", key, "--reason", "no", "--key", bobKey}, {"migrate"}}
		for range 5 {
			cmds = append(cmds, guardArgs(key))
		}
		res := all(cmds...)
		permits := 0
		for _, r := range res[3:] {
			if r.code == cli.ExitOK {
				permits++
			}
		}
		st := jsonOf(t, run(t, db, "", "status", key, "--json"))
		approved := res[0].code == cli.ExitOK
		if approved == (res[1].code == cli.ExitOK) {
			t.Fatalf("%s: approve exit %d and reject exit %d: want exactly one decision\n%s\n%s", key, res[0].code, res[1].code, res[0].stderr, res[1].stderr)
		}
		if permits > 1 || permits == 1 && !approved {
			t.Fatalf("%s: %d guards exited 0 (approved: %v); status %v", key, permits, approved, st)
		}
		if approved {
			// A permit comes now, if no racing guard took it.
			r := run(t, db, "", guardArgs(key)...)
			if permits+map[bool]int{true: 1}[r.code == cli.ExitOK] != 1 {
				t.Fatalf("%s: %d permits in the race, then guard exit %d", key, permits, r.code)
			}
		} else if st["state"] != "rejected" {
			t.Fatalf("%s: rejected, yet status says %v", key, st["state"])
		}
	}

	want(t, run(t, db, "", "guard", "k:two", "--json", "--agent", "bot", "--kind", "two.x", "--target", "t", "--body", "b"), cli.ExitRetry)
	res := all([]string{"approve", "k:two"}, []string{"approve", "k:two"})
	if res[0].code == cli.ExitOK && res[1].code == cli.ExitOK {
		t.Fatalf("alice approved twice at once: %s %s", res[0].stdout, res[1].stdout)
	}
	want(t, run(t, db, "", "guard", "k:two", "--json", "--agent", "bot", "--kind", "two.x", "--target", "t", "--body", "b"), cli.ExitRetry)

	auto := []string{"guard", "k:auto", "--json", "--agent", "bot", "--kind", "auto.x", "--target", "t", "--body", "b"}
	r := run(t, db, "", auto...)
	want(t, r, cli.ExitOK)
	want(t, run(t, db, "", "report", "k:auto", "--permit", jsonOf(t, r)["permit_id"].(string), "--outcome", "succeeded"), cli.ExitOK)
	time.Sleep(5 * time.Millisecond) // settled strictly before the cut-off
	cmds := [][]string{{"archive", "--settled-before", time.Now().UTC().Format(time.RFC3339Nano), "--to", filepath.Join(t.TempDir(), "a.db")}}
	for range 5 {
		cmds = append(cmds, auto)
	}
	res = all(cmds...)
	want(t, res[0], cli.ExitOK)
	for _, r := range res[1:] {
		if r.code != cli.ExitSettled {
			t.Fatalf("a retry of a settled key racing archive: exit %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	want(t, run(t, db, "", auto...), cli.ExitSettled)
	want(t, run(t, db, "", "verify"), cli.ExitOK)
}

// TestWitnessBlindedByALongLedgerID: the agent rebuilds ledger_meta
// without its length check and gives the live ledger a 70,000-character
// id, hoping the next operator backup (or console session) witnesses that
// head in a line longer than a line reader takes: the witness would read
// as absent and the saved copy, restored, get a second permit. Tollgate
// refuses to witness (or open) a ledger whose id is not a canonical UUID,
// and a witness line of any length is read: the long line an older
// backup wrote shows a swap, and a witness that cannot be read at all
// stops every grant.
func TestWitnessBlindedByALongLedgerID(t *testing.T) {
	h := newAnchoredHost(t)
	saved := h.usedApproval(t, "k:once")
	shell(t, h.db, `CREATE TABLE m2 AS SELECT * FROM ledger_meta; DROP TABLE ledger_meta;
		CREATE TABLE ledger_meta(one INTEGER PRIMARY KEY, ledger_id TEXT NOT NULL, created_ms INTEGER NOT NULL) STRICT;
		INSERT INTO ledger_meta SELECT one, ledger_id || printf('%.70000c', 'x'), created_ms FROM m2; DROP TABLE m2;`)
	r := h.run(t, nil, "backup", filepath.Join(t.TempDir(), "operator.db")) // the operator's routine backup
	if r.code == cli.ExitOK || !strings.Contains(r.stdout+r.stderr, "canonical UUID") {
		t.Fatalf("backup of a ledger with a forged id: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(h.witness); len(b) > 4096 {
		t.Fatalf("the forged id reached the witness (%d bytes)", len(b))
	}
	// The line an older backup would have written.
	line, _ := json.Marshal(map[string]any{"ledger_id": strings.Repeat("x", 70000), "seq": 99, "hash": strings.Repeat("0", 64), "path": h.db, "at": time.Now(), "by": "backup"})
	f, err := os.OpenFile(h.witness, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(append(line, '\n'))
	f.Close()
	restoreFile(t, saved, h.db)
	r = h.run(t, nil, guardArgs("k:once")...)
	if r.code == cli.ExitOK {
		t.Fatalf("a second permit for one approval: %s", r.stdout)
	}
	want(t, r, cli.ExitNotPermitted)
	if r := h.run(t, nil, "verify"); r.code != cli.ExitError {
		t.Fatalf("verify: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestLedgerMadeByTheAgentFirst: the agent creates the ledger at the path
// the operators will use before they set it up, and on that unsigned file
// approves its own key as "alice" and sets an auto rule as "alice". Once
// alice registers (and the anchor lists her), neither the unsigned
// approval nor the unsigned rule grants; verify stays clean, since both
// were honest facts of an unsigned ledger, and status says "unsigned".
func TestLedgerMadeByTheAgentFirst(t *testing.T) {
	sqliteOnly(t)
	bin, anchor, _ := anchoredBinary(t)
	db := newDB(t)
	run := func(args ...string) result { return runBin(t, bin, db, "", nil, args...) }
	refund := func(key string) []string {
		return []string{"guard", key, "--json", "--agent", "bot", "--kind", "refund.card", "--target", "acct-1", "--body", "refund 40"}
	}
	want(t, run(refund("k:pre")...), cli.ExitRetry)
	want(t, run("approve", "k:pre", "--operator", "alice"), cli.ExitOK)
	want(t, run("policy", "set", "refund.*", "--mode", "auto", "--operator", "alice"), cli.ExitOK)

	pub := jsonOf(t, run("operator", "init", "--json"))["public_key"].(string)
	os.MkdirAll(filepath.Dir(anchor), 0o755)
	if err := os.WriteFile(anchor, []byte("alice "+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(anchor) })
	want(t, run("operators", "add", "alice", pub), cli.ExitOK)
	r := run(refund("k:pre")...)
	want(t, r, cli.ExitNotPermitted)
	if !strings.Contains(r.stdout, "unsigned") {
		t.Fatalf("guard on the agent's own approval: %s", r.stdout)
	}
	want(t, run(refund("k:new")...), cli.ExitRetry)
	if r := run("status", "k:pre"); !strings.Contains(r.stdout, "unsigned") {
		t.Fatalf("status of the agent's own approval: %s", r.stdout)
	}
}

// TestUsedPermitDeletedUnderItsEvents: alice approved k:once, the agent
// used its permit and reported, and alice's verify witnessed the head.
// The agent then drops the triggers and deletes the permit and report
// rows (and points the projection at "approved"), leaving every event,
// and so the chain and the witnessed head, exactly as they were: nothing
// to recompute, no copy to restore. The same on an auto key, its policy evaluation deleted too. A second
// permit for one approval must be refused: the facts guard grants from
// must all be there for the events that commit them.
func TestUsedPermitDeletedUnderItsEvents(t *testing.T) {
	auto := []string{"guard", "k:auto", "--json", "--agent", "bot", "--kind", "auto.x", "--target", "t", "--body", "b"}
	for _, args := range [][]string{guardArgs("k:once"), auto} {
		// Each key on its own host: the first attack leaves verify's
		// findings behind, which the second's honest path would trip on.
		h := newAnchoredHost(t)
		want(t, h.run(t, nil, "policy", "set", "auto.*", "--mode", "auto"), cli.ExitOK)
		key := args[1]
		if key == "k:once" {
			want(t, h.run(t, nil, args...), cli.ExitRetry)
			want(t, h.run(t, nil, "approve", key), cli.ExitOK)
		}
		r := h.run(t, nil, args...)
		want(t, r, cli.ExitOK)
		want(t, h.run(t, nil, "report", key, "--permit", jsonOf(t, r)["permit_id"].(string), "--outcome", "succeeded"), cli.ExitOK)
		want(t, h.run(t, nil, "verify"), cli.ExitOK)

		dropTriggers(t, h.db)
		shell(t, h.db, `DELETE FROM reports WHERE action_key = '`+key+`'; DELETE FROM permits WHERE action_key = '`+key+`';
			UPDATE action_index SET stage = 'approved' WHERE action_key = '`+key+`';`)
		if key == "k:auto" {
			// An auto key has no decision to stand on: its evaluation
			// goes too, and guard evaluates the rule again.
			shell(t, h.db, `DELETE FROM policy_evals WHERE action_key = 'k:auto'; UPDATE action_index SET stage = 'recorded' WHERE action_key = 'k:auto';`)
		}
		r = h.run(t, nil, args...)
		if r.code == cli.ExitOK {
			t.Fatalf("%s: a second permit after the used one was deleted: %s", key, r.stdout)
		}
		want(t, r, cli.ExitNotPermitted)
		want(t, h.run(t, nil, "verify"), cli.ExitError)
	}
}

// TestArchivedStubDeleted: an auto key settled and archived keeps, in the
// live ledger, its intent and a stub in archived_stubs that answers every
// retry "settled". The agent deletes the stub (triggers dropped; the
// checkpoint event that committed it stays): the key would read as only
// recorded and be permitted a second time. Guard refuses it (77): an
// intent with no projection row is an archived key that lost its stub.
func TestArchivedStubDeleted(t *testing.T) {
	h := newAnchoredHost(t)
	want(t, h.run(t, nil, "policy", "set", "auto.*", "--mode", "auto"), cli.ExitOK)
	auto := []string{"guard", "k:auto", "--json", "--agent", "bot", "--kind", "auto.x", "--target", "t", "--body", "b"}
	r := h.run(t, nil, auto...)
	want(t, r, cli.ExitOK)
	want(t, h.run(t, nil, "report", "k:auto", "--permit", jsonOf(t, r)["permit_id"].(string), "--outcome", "succeeded"), cli.ExitOK)
	time.Sleep(5 * time.Millisecond) // settled strictly before the cut-off
	want(t, h.run(t, nil, "archive", "--settled-before", time.Now().UTC().Format(time.RFC3339Nano), "--to", filepath.Join(t.TempDir(), "a.db")), cli.ExitOK)
	want(t, h.run(t, nil, "verify"), cli.ExitOK)
	want(t, h.run(t, nil, auto...), cli.ExitSettled)

	dropTriggers(t, h.db)
	shell(t, h.db, "DELETE FROM archived_stubs WHERE action_key = 'k:auto'")
	r = h.run(t, nil, auto...)
	if r.code == cli.ExitOK {
		t.Fatalf("a settled, archived key permitted again: %s", r.stdout)
	}
	want(t, r, cli.ExitNotPermitted)
	want(t, h.run(t, nil, "verify"), cli.ExitError)
}
