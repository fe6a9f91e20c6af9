package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// shell runs SQL through the sqlite3 command-line shell on the ledger
// file, as an agent with a shell would: triggers are its to drop.
func shell(t *testing.T, path, sql string) {
	t.Helper()
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("TOLLGATE_REQUIRE_SQLITE3") != "" {
			t.Fatal("sqlite3 is not on PATH")
		}
		t.Skip("sqlite3 is not on PATH")
	}
	if out, err := exec.Command(sqlite3, path, sql).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
}

// dropTriggers is the shell line that drops every append-only trigger.
func dropTriggers(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("sqlite3", path, "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_schema WHERE type = 'trigger'").Output()
	if err != nil {
		t.Fatal(err)
	}
	shell(t, path, string(out))
}

// anchoredBuild is tollgate built as an installer would build it for a
// host: the system anchor and the shared witness at places fixed at
// build time, here in the test's folder (root owns nothing the test
// could not remove).
var anchoredBuild struct {
	once               sync.Once
	bin, dir, err      string
	anchor, witnessDir string
}

func anchoredBinary(t *testing.T) (bin, anchor, witness string) {
	t.Helper()
	b := &anchoredBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "tollgate-anchored")
		if err != nil {
			b.err = err.Error()
			return
		}
		b.dir, b.anchor, b.witnessDir = dir, filepath.Join(dir, "etc", "operators"), filepath.Join(dir, "var", "lib")
		b.bin = filepath.Join(dir, "tollgate")
		flags := "-X github.com/tollgate-dev/tollgate/opkeys.SystemAnchorPath=" + b.anchor +
			" -X github.com/tollgate-dev/tollgate/ledger.SystemWitnessPath=" + filepath.Join(b.witnessDir, "witness")
		if err := goBuild(b.bin, "..", "-ldflags", flags); err != nil {
			b.err = err.Error()
		}
	})
	if b.err != "" {
		t.Fatal(b.err)
	}
	return b.bin, b.anchor, filepath.Join(b.witnessDir, "witness")
}

// TestPatientAgentFromTheShell plays, with real processes and a sqlite3
// shell on the ledger file, the attacks of an agent that can write the
// file and set its own environment but holds no operator key. Each must
// end without a permit, and policy list, status and verify must say what
// happened.
func TestPatientAgentFromTheShell(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	pub := jsonOf(t, run(t, db, "", "operator", "init", "--json"))["public_key"].(string)
	refund := []string{"--kind", "refund.card", "--target", "acct-1", "--body", "refund 40"}
	guard := func(key string) []string {
		return append([]string{"guard", key, "--json", "--agent", "bot"}, refund...)
	}

	// A rule set before the ledger is signed stops applying when it is,
	// and policy list says so.
	want(t, run(t, db, "", "policy", "set", "refund.*", "--mode", "auto", "--operator", "alice"), cli.ExitOK)
	want(t, run(t, db, "", "operators", "add", "alice", pub), cli.ExitOK)
	if r := run(t, db, "", "policy", "list"); !strings.Contains(r.stdout, "NOT IN FORCE: unsigned: set before the ledger was signed") {
		t.Fatalf("policy list after signing: %s", r.stdout)
	}
	want(t, run(t, db, "", guard("k:early")...), cli.ExitRetry)
	want(t, run(t, db, "", "policy", "set", "refund.*", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "refund.*", "--mode", "approval"), cli.ExitOK)
	if r := run(t, db, "", "policy", "list", "--json"); strings.Count(r.stdout, `"in_force":true`) != 1 {
		t.Fatalf("policy list: %s", r.stdout)
	}

	t.Run("an older signed auto rule copied back as the newest", func(t *testing.T) {
		cp := filepath.Join(t.TempDir(), "ledger.db")
		want(t, run(t, db, "", "backup", cp), cli.ExitOK)
		dropTriggers(t, cp)
		shell(t, cp, `DROP INDEX signatures_once;
			INSERT INTO policy_rules(pattern, mode, ttl_ms, operator, set_ms, approvers)
				SELECT pattern, mode, ttl_ms, operator, set_ms, approvers FROM policy_rules WHERE pattern = 'refund.*' AND mode = 'auto' AND id > 1;
			INSERT INTO signatures(fact_table, fact_row, fingerprint, signed_ms, signature, at_ms)
				SELECT 'policy_rules', (SELECT CAST(max(id) AS TEXT) FROM policy_rules), fingerprint, signed_ms, signature, at_ms
				FROM signatures WHERE fact_table = 'policy_rules' AND fact_row = (SELECT CAST(id AS TEXT) FROM policy_rules WHERE pattern = 'refund.*' AND mode = 'auto' AND id > 1 ORDER BY id LIMIT 1);`)
		r := run(t, cp, "", guard("k:copied")...)
		want(t, r, cli.ExitNotPermitted)
		if !strings.Contains(r.stdout, "integrity") || strings.Contains(r.stdout, "permit_id") {
			t.Fatalf("guard on the copied rule: %s", r.stdout)
		}
		if r := run(t, cp, "", "policy", "list"); !strings.Contains(r.stdout, "INVALID") {
			t.Fatalf("policy list shows the copy in force: %s", r.stdout)
		}
		if r := run(t, cp, "", "verify"); r.code != cli.ExitError || !strings.Contains(r.stdout, "a signature counts once") {
			t.Fatalf("verify: %d %s", r.code, r.stdout)
		}
	})

	t.Run("the operators deleted so that the ledger reads as never signed", func(t *testing.T) {
		want(t, run(t, db, "", guard("k:pending")...), cli.ExitRetry)
		cp := filepath.Join(t.TempDir(), "ledger.db")
		want(t, run(t, db, "", "backup", cp), cli.ExitOK)
		dropTriggers(t, cp)
		shell(t, cp, `DELETE FROM operators; DELETE FROM events WHERE fact_table = 'operators';
			INSERT INTO votes(action_key, decision, operator, name_key, reason, at_ms) VALUES ('k:pending', 'approved', 'mallory', 'mallory', '', 1);
			INSERT INTO decisions(action_key, decision, operator, reason, at_ms) VALUES ('k:pending', 'approved', 'mallory', '', 1);
			UPDATE action_index SET stage = 'approved' WHERE action_key = 'k:pending';`)
		// From a shell the forged decision has no chained event (sqlite3
		// has no SHA-256): it is evidence, not a decision, so the key is
		// still pending; the ledger-level test forges the events too and
		// gets the integrity refusal.
		want(t, run(t, cp, "", guard("k:pending")...), cli.ExitRetry)
		if r := run(t, cp, "", "status", "k:pending"); !strings.Contains(r.stdout, "state:        pending") || !strings.Contains(r.stdout, "FORGED:") {
			t.Fatalf("status of the forged approval: %s", r.stdout)
		}
		want(t, run(t, cp, "", "verify"), cli.ExitError)
	})
}

// TestAnchorAndWitnessFromTheShell runs a build whose anchor and shared
// witness are fixed at build time: the agent's own operators file can
// only narrow the anchor, and a restored or swapped ledger file is
// refused once an operator's verify has witnessed a later head.
func TestAnchorAndWitnessFromTheShell(t *testing.T) {
	sqliteOnly(t)
	bin, anchor, witness := anchoredBinary(t)
	db := newDB(t)
	run := func(env []string, args ...string) result { return runBin(t, bin, db, "", env, args...) }
	alicePub := jsonOf(t, run(nil, "operator", "init", "--json"))["public_key"].(string)
	bobKey := filepath.Join(t.TempDir(), "bob")
	bobPub := jsonOf(t, run(nil, "operator", "init", "--key", bobKey, "--json"))["public_key"].(string)
	os.MkdirAll(filepath.Dir(anchor), 0o755)
	if err := os.WriteFile(anchor, []byte("alice "+alicePub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(anchor) })
	want(t, run(nil, "operators", "add", "alice", alicePub), cli.ExitOK)
	want(t, run(nil, "operators", "add", "bob", bobPub), cli.ExitOK)
	if r := run(nil, "operators", "list"); !strings.Contains(r.stdout, "NOT IN FORCE") {
		t.Fatalf("bob is registered but not in the anchor: %s", r.stdout)
	}

	// The agent's own operators file lists bob; under the system anchor it
	// narrows, never widens: bob's approval gives no permit.
	own := filepath.Join(t.TempDir(), "operators")
	os.WriteFile(own, []byte("bob "+bobPub+"\nalice "+alicePub+"\n"), 0o644)
	env := []string{"TOLLGATE_OPERATORS_FILE=" + own}
	want(t, run(env, guardArgs("k:bob")...), cli.ExitRetry)
	want(t, run(env, "approve", "k:bob", "--key", bobKey), cli.ExitNotPermitted)
	if r := run(env, guardArgs("k:bob")...); r.code == cli.ExitOK || !strings.Contains(r.stdout, "narrowed by") {
		t.Fatalf("guard with the agent's own operators file: %d %s", r.code, r.stdout)
	}

	// Rollback: the agent keeps a copy taken after alice's approval and
	// before its permit, then restores it after using the permit.
	os.MkdirAll(filepath.Dir(witness), 0o755)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(witness)) })
	want(t, run(nil, guardArgs("k:once")...), cli.ExitRetry)
	want(t, run(nil, "approve", "k:once"), cli.ExitOK)
	saved := filepath.Join(t.TempDir(), "saved.db")
	want(t, run(nil, "backup", saved), cli.ExitOK)
	want(t, run(nil, guardArgs("k:once")...), cli.ExitOK)
	want(t, run(nil, "verify"), cli.ExitOK) // the operator's verify feeds the shared witness
	if b, err := os.ReadFile(witness); err != nil || !strings.Contains(string(b), `"path":"`+db+`"`) {
		t.Fatalf("the shared witness: %q %v", b, err)
	}
	restore := func(from string) {
		for _, sfx := range []string{"", "-wal", "-shm"} {
			os.Remove(db + sfx)
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(db, b, 0o600)
	}
	restore(saved)
	r := run(nil, guardArgs("k:once")...)
	want(t, r, cli.ExitNotPermitted)
	if !strings.Contains(r.stdout, "rolled back or restored") {
		t.Fatalf("guard on the restored copy: %s", r.stdout)
	}
	want(t, run(nil, "verify"), cli.ExitError)

	// Swap: a fresh ledger of the agent's own at the same path, whose
	// auto rule nobody signed.
	fresh := filepath.Join(t.TempDir(), "own.db")
	want(t, runBin(t, bin, fresh, "", []string{"TOLLGATE_DB=" + fresh}, "policy", "set", "*", "--mode", "auto", "--operator", "mallory"), cli.ExitNotPermitted)
	os.Remove(anchor) // the agent's own ledger needs no operator without an anchor
	want(t, runBin(t, bin, fresh, "", []string{"TOLLGATE_DB=" + fresh}, "policy", "set", "*", "--mode", "auto", "--operator", "mallory"), cli.ExitOK)
	restore(fresh)
	r = run(nil, guardArgs("k:swapped")...)
	want(t, r, cli.ExitNotPermitted)
	if !strings.Contains(r.stdout, "a swap") {
		t.Fatalf("guard on the swapped ledger: %s", r.stdout)
	}
	if r := run(nil, "verify"); r.code != cli.ExitError || !strings.Contains(r.stdout, "a swap") {
		t.Fatalf("verify on the swapped ledger: %d %s", r.code, r.stdout)
	}
}

// TestUnreachableLedgerIsATemporaryFailure: a PostgreSQL ledger that
// cannot be reached is asked again for --retry-for, then the agent gets
// exit 75 with "safe_to_repeat": nothing was recorded. The budget comes
// from the flag, else $TOLLGATE_RETRY_FOR.
func TestUnreachableLedgerIsATemporaryFailure(t *testing.T) {
	db := "postgres://bot@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=1"
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"--retry-for", "1500ms"}},
		{[]string{"TOLLGATE_RETRY_FOR=1500ms"}, nil},
	} {
		start := time.Now()
		r := runEnv(t, db, "", tc.env, append(guardArgs("k:down"), tc.args...)...)
		took := time.Since(start)
		want(t, r, cli.ExitTempFail)
		if m := r.json(t); m["safe_to_repeat"] != true || !strings.Contains(fmt.Sprint(m["error"]), "nothing was recorded") {
			t.Fatalf("the answer: %s", r.stdout)
		}
		if took < time.Second || took > 20*time.Second {
			t.Fatalf("gave up after %s, want about the 1.5 s budget", took)
		}
	}
	if r := runEnv(t, db, "", []string{"TOLLGATE_RETRY_FOR=soon"}, guardArgs("k:down")...); r.code != cli.ExitInvalid || !strings.Contains(r.stderr, "TOLLGATE_RETRY_FOR") {
		t.Fatalf("a bad budget: %d %s", r.code, r.stderr)
	}
}
