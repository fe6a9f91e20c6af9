package ui

import (
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestLedgerFileReplacedIsSaid: a ledger file replaced under a running
// console (another ledger renamed over its path) is said in a banner
// within the identity check's second, and decisions are refused: the
// console's connections still read the file that is no longer there.
func TestLedgerFileReplacedIsSaid(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:id-1", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "refund:id-1")
	o, err := ledger.Open(ctx, "other.db", ledger.Options{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if err := os.Rename("other.db", "ledger.db"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "!! LEDGER FILE REPLACED · decisions refused")
	tm.Send(press("a"))
	waitFor(t, tm, "decisions refused: LEDGER FILE REPLACED: another file")
	final(t, tm)
	if d, err := f.s.Status(ctx, "refund:id-1"); err != nil || d.State != ledger.StatePending {
		t.Fatalf("a decision went through on a replaced file: %s %v", d.State, err)
	}
}

// TestLedgerFileDeletedThenBack: the file moved away reads as deleted
// (banner, decisions refused); moved back, the console says so and
// decides again.
func TestLedgerFileDeletedThenBack(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:id-2", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(60, 20, false, "alice")
	waitFor(t, tm, "refund:id-2")
	if err := os.Rename("ledger.db", "moved.db"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "!! LEDGER FILE DELETED")
	if err := os.Rename("moved.db", "ledger.db"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "the ledger file is back as opened")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("esc"))
	waitFor(t, tm, "cancelled")
	final(t, tm)
}
