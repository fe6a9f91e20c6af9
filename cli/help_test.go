package cli_test

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestHelpTyposThroughTheBinary: a mistyped flag or command is a usage
// error (exit 2) that names the nearest one, in text and with --json.
func TestHelpTyposThroughTheBinary(t *testing.T) {
	db := newDB(t)
	r := run(t, db, "", "approve", "refund:1", "--operater", "alice")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "unknown flag --operater: did you mean --operator?") {
		t.Fatalf("--operater: %d %q", r.code, r.stderr)
	}
	r = run(t, db, "", "guard", "refund:1", "--kidn", "refund", "--json")
	if r.code != cli.ExitUsage || !strings.Contains(r.json(t)["error"].(string), "did you mean --kind?") {
		t.Fatalf("--kidn with --json: %d %s", r.code, r.stdout)
	}
	r = run(t, db, "", "--dbb", db, "list")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "did you mean --db?") {
		t.Fatalf("a global flag: %d %q", r.code, r.stderr)
	}
	r = run(t, db, "", "gaurd", "refund:1")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, `did you mean "guard"?`) {
		t.Fatalf("gaurd: %d %q", r.code, r.stderr)
	}
	r = run(t, db, "", "policy", "lst")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, `did you mean "policy list"?`) {
		t.Fatalf("policy lst: %d %q", r.code, r.stderr)
	}
	if r := run(t, db, "", "frobnicate"); r.code != cli.ExitUsage || strings.Contains(r.stderr, "did you mean") {
		t.Fatalf("nothing is near frobnicate: %d %q", r.code, r.stderr)
	}
	if r := run(t, db, "", "guard", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Example:\n  tollgate guard ") {
		t.Fatalf("guard --help: %s", r.stdout)
	}
}
