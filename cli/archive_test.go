package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestArchiveCommand runs archive as an operator would: settled actions
// move, an identical retry still replays, a changed payload is still a
// conflict, status says where the facts went, verify --archive proves the
// file, and the archive itself grants nothing.
func TestArchiveCommand(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "auto"), cli.ExitOK)
	guard := func(key, body string) []string {
		return []string{"guard", key, "--kind", "refund", "--target", "acct-1", "--body", body, "--agent", "bot", "--json"}
	}
	r := run(t, db, "", guard("refund:r-1", "10.00")...)
	want(t, r, cli.ExitOK)
	permit, _ := jsonOf(t, r)["permit_id"].(string)
	want(t, run(t, db, "", "report", "refund:r-1", "--permit", permit, "--outcome", "succeeded"), cli.ExitOK)
	want(t, run(t, db, "", guard("refund:r-2", "20.00")...), cli.ExitOK) // executing: stays

	archive := filepath.Join(t.TempDir(), "archive-2026.db")
	want(t, run(t, db, "", "archive", "--to", archive), 2)                             // --settled-before is required
	want(t, run(t, db, "", "archive", "--settled-before", "soon", "--to", archive), 2) // names the rule
	r = run(t, db, "", "archive", "--settled-before", "2099-01-01", "--to", archive, "--json")
	want(t, r, cli.ExitOK)
	if a, _ := jsonOf(t, r)["archive"].(map[string]any); a["keys"] != 1.0 {
		t.Fatalf("archive moved %v keys: %s", a["keys"], r.stdout)
	}
	r = run(t, db, "", guard("refund:r-1", "10.00")...)
	want(t, r, cli.ExitSettled)
	if m := jsonOf(t, r); m["replayed"] != true || m["state"] != "succeeded" {
		t.Fatalf("retry of an archived key: %s", r.stdout)
	}
	want(t, run(t, db, "", guard("refund:r-1", "99.00")...), cli.ExitConflict)
	if r := run(t, db, "", "status", "refund:r-1"); !strings.Contains(r.stdout, "archived:") || !strings.Contains(r.stdout, "archive-2026.db") {
		t.Fatalf("status of an archived key: %s", r.stdout)
	}
	if r := run(t, db, "", "verify", "--archive", archive); r.code != cli.ExitOK || !strings.Contains(r.stdout, "1 keys") {
		t.Fatalf("verify --archive: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, db, "", "export", "--archives"); r.code != cli.ExitOK || !strings.Contains(r.stdout, `"archive_file":`) {
		t.Fatalf("export --archives: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The same file again is refused, and the live ledger is unchanged.
	want(t, run(t, db, "", "archive", "--settled-before", "2099-01-01", "--to", archive), cli.ExitInvalid)
	// An agent pointed at the archive gets nothing from it.
	if r := run(t, archive, "", guard("refund:r-9", "1.00")...); r.code == cli.ExitOK {
		t.Fatalf("guard on the archive file issued a permit: %s", r.stdout)
	}
	// Another ledger's file is not this ledger's archive.
	other := newDB(t)
	want(t, run(t, other, "", "record", "x", "--kind", "k", "--target", "t", "--body", "b"), cli.ExitOK)
	want(t, run(t, db, "", "verify", "--archive", other), cli.ExitError)
}
