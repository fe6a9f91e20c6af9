package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestListLoggedAndShowPayload: what the console's Fenced calls and
// Conflicts views show, and a retained payload, are reachable from the
// shell too; the payload only through show --payload, escaped.
func TestListLoggedAndShowPayload(t *testing.T) {
	db := newDB(t)
	hostile := "refund 40 EUR\x1b]0;owned\x07\napprove=NO\rapprove=YES"
	want(t, run(t, db, "", "guard", "refund:p-1", "--kind", "refund", "--target", "acct\u202e7", "--body", hostile, "--agent", "bot", "--json"), cli.ExitRetry)
	want(t, run(t, db, "", "guard", "refund:p-1", "--kind", "refund", "--target", "acct\u202e7", "--body", "other", "--agent", "bot", "--json"), cli.ExitConflict)
	want(t, run(t, db, "", "guard", "hsr1:00000000-0000-4000-8000-000000000009:x", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "old-bot"), cli.ExitDenied)

	var fenced []map[string]any
	r := run(t, db, "", "list", "--state", "fenced", "--json")
	want(t, r, cli.ExitOK)
	if err := json.Unmarshal([]byte(r.stdout), &fenced); err != nil || len(fenced) != 1 || fenced[0]["agent"] != "old-bot" {
		t.Fatalf("list --state fenced: %q (%v)", r.stdout, err)
	}
	r = run(t, db, "", "list", "--state", "conflict")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "refund:p-1") || !strings.Contains(r.stdout, "differs in body") {
		t.Fatalf("list --state conflict: %q", r.stdout)
	}
	want(t, run(t, db, "", "list", "--state", "conflict", "--kind", "refund"), cli.ExitUsage)
	if r := run(t, db, "", "list", "--state", "nonsense"); r.code != cli.ExitInvalid || !strings.Contains(r.stderr, "fenced, conflict") {
		t.Fatalf("unknown state: %d %q", r.code, r.stderr)
	}

	// status never prints the body; show --payload prints it escaped.
	if r := run(t, db, "", "status", "refund:p-1"); strings.Contains(r.stdout, "approve=") {
		t.Fatalf("status printed the body: %q", r.stdout)
	}
	r = run(t, db, "", "show", "refund:p-1", "--payload")
	want(t, r, cli.ExitOK)
	for _, s := range []string{`payload target: acct\u202e7`, `refund 40 EUR\x1b]0;owned\x07\n`, `approve=NO\rapprove=YES`} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("show --payload lacks %q:\n%s", s, r.stdout)
		}
	}
	if strings.ContainsAny(r.stdout, "\x1b\r\u202e") {
		t.Errorf("show --payload wrote a raw control or format character")
	}
	var shown struct {
		Payload struct{ Body string } `json:"payload"`
	}
	r = run(t, db, "", "show", "refund:p-1", "--payload", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown.Payload.Body != hostile {
		t.Fatalf("show --payload --json: %q (%v)", r.stdout, err)
	}
}
