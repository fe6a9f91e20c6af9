package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestTextAnswersSayWhatToDo: the text answers a newcomer reads first say
// each thing once and say what settles an uncertain key. A key no rule
// matched shows its policy as the console does ("default: no rule
// matches", not "rule (no rule matches)"); an uncertain guard says
// "uncertain", not "uncertain (uncertain)"; status of an uncertain key
// names the reconcile command.
func TestTextAnswersSayWhatToDo(t *testing.T) {
	db := newDB(t)
	pay := []string{"--kind", "refund", "--target", "acct-7", "--body", "b", "--agent", "bot"}
	want(t, run(t, db, "", append([]string{"guard", "refund:w-1"}, pay...)...), cli.ExitRetry)
	r := run(t, db, "", "status", "refund:w-1")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "policy:       approval (default: no rule matches)\n") {
		t.Errorf("status of a key no rule matched:\n%s", r.stdout)
	}

	want(t, run(t, db, "", "policy", "set", "maint.*", "--mode", "auto"), cli.ExitOK)
	m := []string{"--kind", "maint.vacuum", "--target", "db", "--body", "vacuum", "--agent", "cron"}
	want(t, run(t, db, "", append([]string{"guard", "maint:w-1", "--lease", "1s"}, m...)...), cli.ExitOK)
	time.Sleep(1500 * time.Millisecond) // the lease runs out with no report
	r = run(t, db, "", append([]string{"guard", "maint:w-1"}, m...)...)
	want(t, r, cli.ExitUncertain)
	if !strings.HasPrefix(r.stdout, "maint:w-1: uncertain, replayed") {
		t.Errorf("guard of an uncertain key: %q", r.stdout)
	}
	r = run(t, db, "", "status", "maint:w-1")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "next:         find out whether it ran, then: tollgate reconcile maint:w-1 --result executed|not-executed --note N\n") {
		t.Errorf("status of an uncertain key does not say what settles it:\n%s", r.stdout)
	}
}

// TestHelpShowsTheDefaultsThatApply: every command's --help gives
// --retry-for and --attempt-timeout the defaults the README and
// docs/cli.md name (30s, 10s), not the "(default -1ns)" that stands for
// "not given" inside.
func TestHelpShowsTheDefaultsThatApply(t *testing.T) {
	db := newDB(t)
	for _, args := range [][]string{{"guard", "--help"}, {"approve", "--help"}, {"epoch", "show", "--help"}} {
		r := run(t, db, "", args...)
		want(t, r, cli.ExitOK)
		if strings.Contains(r.stdout, "-1ns") || !strings.Contains(r.stdout, "(default 30s)") || !strings.Contains(r.stdout, "(default 10s)") {
			t.Errorf("%v:\n%s", args, r.stdout)
		}
	}
}

// TestNoLedgerSaysHowToMakeOne: the first command a newcomer runs on a
// machine with no ledger (the console, list) says how one is made, not
// only that none exists.
func TestNoLedgerSaysHowToMakeOne(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	r := run(t, db, "", "list")
	want(t, r, cli.ExitNotFound)
	if !strings.Contains(r.stderr, "no ledger at") || !strings.Contains(r.stderr, "'tollgate migrate' creates it") {
		t.Errorf("list with no ledger: %q", r.stderr)
	}
}
