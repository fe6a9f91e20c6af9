package ui

import (
	"context"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

// gatedLedger holds every list query until gate is closed: the first
// load lands after the authority read, as it does under the race
// detector on a busy machine.
type gatedLedger struct {
	*ledger.Store
	gate chan struct{}
}

func (g gatedLedger) List(ctx context.Context, f ledger.Filter) ([]ledger.Row, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Store.List(ctx, f)
}

// TestKeyBeforeFirstLoad: the status bar names the operator as soon as
// authority is read, which may be before the list is; a decision key
// pressed then says the list is still loading (not "nothing selected",
// which reads as an empty view), and works once the rows show. This
// ordering is what TestSignedConsole raced on under -race.
func TestKeyBeforeFirstLoad(t *testing.T) {
	f := newSignedFixture(t)
	f.guard("refund:g-1", "refund", "refund 10 EUR", "refund-bot")
	gate := make(chan struct{})
	tm := f.run(Options{Store: gatedLedger{Store: f.s, gate: gate}}, 100, 30)
	waitFor(t, tm, "op alice signed")
	tm.Send(press("a"))
	waitFor(t, tm, "the list is still loading")
	close(gate)
	waitFor(t, tm, "refund:g-1")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("esc"))
	waitFor(t, tm, "cancelled")
	final(t, tm)
	if d, err := f.s.Status(ctx, "refund:g-1"); err != nil || d.State != ledger.StatePending {
		t.Fatalf("a cancelled dialog changed the key: %s %v", d.State, err)
	}
}
