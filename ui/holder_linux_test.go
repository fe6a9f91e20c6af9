package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestLockWaitNamesHolder: while another process holds the ledger's
// write lock, a decision in flight says "waiting for the ledger (held by
// pid N (…))" with the time waited; esc stops waiting and nothing is
// recorded; released, the next decision goes through.
func TestLockWaitNamesHolder(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:hb-1", "refund", "refund 40 EUR", "refund-bot")
	tm := f.console(160, 30, false, "alice")
	waitFor(t, tm, "refund 40 EUR")
	holder, release := holdLockElsewhere(t)
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, fmt.Sprintf("waiting for the ledger (held by pid %d (%s -test.run=^$)) ", holder.Process.Pid, filepath.Base(os.Args[0])))
	tm.Send(press("esc"))
	waitFor(t, tm, "stopped waiting: approve refund:hb-1 not recorded")
	if d, _ := f.s.Status(ctx, "refund:hb-1"); d.State != ledger.StatePending {
		t.Fatalf("refund:hb-1 is %s after esc", d.State)
	}
	release()
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "approve: 1 done (refund:hb-1)")
	final(t, tm)
}
