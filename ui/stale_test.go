package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"io"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestOthersDecisionNoticedInAnyView: a key decided by another operator
// is announced on the message line (and in the log) in whatever view
// is shown, here All actions with the cursor on another key, where the
// row only changes state in place.
func TestOthersDecisionNoticedInAnyView(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:o-1", "refund", "x", "refund-bot")
	f.guard("refund:o-2", "refund", "y", "refund-bot")
	tm := f.console(100, 30, true, "alice")
	waitFor(t, tm, "refund:o-1")
	tm.Send(press("5"))
	waitFor(t, tm, "key        refund:o-2") // All: newest first, the cursor off refund:o-1
	if _, err := f.other().Reject(ctx, "refund:o-1", "bob", "duplicate"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "refund:o-1 was rejected by bob at 2026-12-01 09:00:00Z")
	m := finalModel(t, tm)
	n := 0
	for _, e := range m.log.entries {
		n += strings.Count(e.text, "refund:o-1 was rejected by bob")
	}
	if n != 1 {
		t.Fatalf("the decision is in the log %d times", n)
	}
}

// TestStaleDialogSaysWhatChangedAndAsksAgain: a key decided elsewhere
// while a batch dialog is open leaves it; the dialog says what changed,
// the next enter only acknowledges, and the one after decides the keys
// still listed.
func TestStaleDialogSaysWhatChangedAndAsksAgain(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:st-1", "refund", "x", "refund-bot")
	f.guard("refund:st-2", "refund", "y", "refund-bot")
	m := f.model(100, 30, io.Discard)
	step(m, press("*"))
	step(m, press("a"))
	if v := m.View(); !strings.Contains(v, "Approve 2 actions?") {
		t.Fatalf("no batch dialog:\n%s", v)
	}
	if _, err := f.other().Approve(ctx, "refund:st-1", "bob", "fine"); err != nil {
		t.Fatal(err)
	}
	drain(m, m.snapshot()) // the refresh that sees bob's write
	v := m.View()
	for _, want := range []string{"Approve 1 action?", "changed: refund:st-1 left Pending approvals", "changed while open: enter to go on", "refund:st-1 was approved by bob"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the stale dialog lacks %q:\n%s", want, v)
		}
	}
	step(m, press("enter")) // acknowledges the change
	if m.dialog == nil {
		t.Fatal("the enter after a change decided (or closed the dialog) instead of asking again")
	}
	if d, _ := f.s.Status(ctx, "refund:st-2"); d.State != ledger.StatePending {
		t.Fatalf("refund:st-2 is %s after the acknowledging enter", d.State)
	}
	step(m, press("enter"))
	if d, _ := f.s.Status(ctx, "refund:st-2"); d.State != ledger.StateApproved {
		t.Fatalf("refund:st-2 is %s after the confirming enter", d.State)
	}
	if d, _ := f.s.Status(ctx, "refund:st-1"); d.Decision == nil || d.Decision.Operator != "bob" {
		t.Fatalf("refund:st-1 was decided again: %+v", d.Decision)
	}
}

// TestActiveViewMarkedWithoutColour: with no colour at all (NO_COLOR,
// the tests' Ascii profile) the active view is still marked, by
// brackets, at every width.
func TestActiveViewMarkedWithoutColour(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:nc-1", "refund", "x", "refund-bot")
	for _, w := range []int{40, 80, 120} {
		m := f.model(w, 24, io.Discard)
		step(m, press("5"))
		if v := m.View(); !strings.Contains(v, "[All") || strings.Contains(v, "[P") {
			t.Fatalf("at %d columns the active view is not the one marked:\n%s", w, v)
		}
	}
}

// TestStatusTimeIsAHeartbeat: the status bar's time moves with every
// check that finds nothing written, so an idle console shows it is live.
func TestStatusTimeIsAHeartbeat(t *testing.T) {
	f := newFixture(t)
	m := f.model(160, 24, io.Discard)
	m.opt.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 41, 7, 0, time.UTC) }
	step(m, checkedMsg{changed: false})
	if v := m.View(); !strings.Contains(v, "updated 09:41:07Z") {
		t.Fatalf("the status bar's time did not move:\n%s", v)
	}
}

// TestStatusClockLabelledAtEveryWidth: the status bar's clock says what
// it is ("updated"), and below 100 columns it leads the line in a
// shorter form instead of being cut off its end.
func TestStatusClockLabelledAtEveryWidth(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:c-1", "refund", "x", "refund-bot")
	m := f.model(80, 20, io.Discard)
	for _, c := range []struct {
		w    int
		want string
	}{{40, "upd 09:30:00 · ledger"}, {60, "upd 09:30:00 · ledger"}, {99, "upd 09:30:00 · ledger"}, {120, "· updated 09:30:00Z"}, {200, "· updated 09:30:00Z"}} {
		m.Update(tea.WindowSizeMsg{Width: c.w, Height: 20})
		if v := m.View(); !strings.Contains(v, c.want) {
			t.Fatalf("at %d columns the status bar lacks %q:\n%s", c.w, c.want, v)
		}
	}
}
