package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestExperimentOnACopyLeavesAgentsWorking (issue 42): an operator backs
// the ledger up, experiments on the copy (a rule set there, a verify, a
// backup of it) and the real ledger's agents keep getting permits: the
// copy's heads never reach the shared witness, and verify says it is a
// copy.
func TestExperimentOnACopyLeavesAgentsWorking(t *testing.T) {
	if onPostgres {
		t.Skip("a ledger file and its copy")
	}
	shared := ledger.SystemWitnessPath // the binary's too: this run's stand-in
	if err := os.MkdirAll(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(shared)) })
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "job.*", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	want(t, run(t, db, "", "verify"), cli.ExitOK)
	if b, _ := os.ReadFile(shared); !strings.Contains(string(b), db) {
		t.Fatalf("the real ledger's verify did not feed the shared witness: %s", b)
	}
	cp := filepath.Join(t.TempDir(), "experiment.db")
	want(t, run(t, db, "", "backup", cp), cli.ExitOK)
	before, _ := os.ReadFile(shared)
	want(t, run(t, cp, "", "policy", "set", "scratch", "--mode", "deny", "--operator", "alice"), cli.ExitOK)
	r := run(t, cp, "", "verify")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stderr, "is a copy") {
		t.Fatalf("verify of the copy does not say it is one: %q", r.stderr)
	}
	want(t, run(t, cp, "", "backup", filepath.Join(t.TempDir(), "again.db")), cli.ExitOK)
	if after, _ := os.ReadFile(shared); string(after) != string(before) {
		t.Fatalf("the experiment wrote the shared witness:\n%s", after)
	}
	g := run(t, db, "", "guard", "job:1", "--kind", "job.nightly", "--target", "t", "--body", "b", "--agent", "bot", "--json")
	want(t, g, cli.ExitOK)
}
