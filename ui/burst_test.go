package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestKeyBurstsHandleEveryRune: keys typed faster than the terminal is
// read arrive as one message with several runes; each is a key press.
// "jjj" moves three rows, "/ALPHA" opens the filter and types the rest,
// and a paste into the filter is taken whole.
func TestKeyBurstsHandleEveryRune(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 6; i++ {
		f.guard(fmt.Sprintf("refund:b-%d", i), "refund", fmt.Sprintf("body %d", i), "refund-bot")
	}
	f.guard("refund:alpha-beta", "refund", "x", "Alpha-Bot")
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "body 0")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjj")})
	waitFor(t, tm, "body 3")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/ALPHA")})
	waitFor(t, tm, "filter: ALPHA · 1 shown")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("-beta"), Paste: true})
	waitFor(t, tm, "filter: ALPHA-beta · 1 shown")
	tm.Send(press("enter"))
	tm.Send(press("esc"))
	waitFor(t, tm, "Pending 7")
	// A paste outside any input goes to the filter, never run as keys:
	// its q does not quit.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b-5q"), Paste: true})
	waitFor(t, tm, "filter: b-5q · 0 shown")
	m := finalModel(t, tm)
	if m.filter.Value() != "b-5q" {
		t.Fatalf("filter = %q", m.filter.Value())
	}
}

// TestRefusedDecisionDropsTypeAhead: a note typed blind after a decision
// key that was refused (c on a pending row) has no dialog to go into, so
// its letters would run as commands: "c not run" arrives as c, space,
// "not", space, "run" and enter, and the r opened a rejection of the row
// under the cursor with "un" as its reason, one enter from rejecting a
// key the operator never meant to. Keys typed right after the refusal
// (each within typeAhead of the last, as type-ahead and fast typing
// are) are dropped and said; a key pressed after a pause works.
func TestRefusedDecisionDropsTypeAhead(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:b-1", "refund", "body 1", "refund-bot")
	m := f.model(100, 30, io.Discard)
	wall := &clock{t: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)}
	m.wall = wall.Now
	for _, k := range []tea.KeyMsg{press("c"), press("space"), press("not"), press("space"), press("run"), press("enter")} {
		step(m, k)
		wall.Add(50 * time.Millisecond)
	}
	if m.dialog != nil {
		t.Fatalf("the keys typed after a refused c opened a dialog:\n%s", m.View())
	}
	if !strings.Contains(m.lastErr, "reconcile applies to uncertain") || !strings.Contains(m.lastErr, `dropped " not run⏎"`) {
		t.Fatalf("message line: %q", m.lastErr)
	}
	// After a pause the keys are the console's again, and a decision
	// key with its note in one burst still opens its dialog with it.
	wall.Add(time.Second)
	step(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("rno-such-order")})
	if m.dialog == nil || !strings.Contains(m.View(), "no-such-order") {
		t.Fatalf("a reject typed with its reason:\n%s", m.View())
	}
	if d, _ := f.s.Status(ctx, "refund:b-1"); d.State != ledger.StatePending {
		t.Fatalf("state %s", d.State)
	}
}

// pause is the operator reading a refusal before the next key: the
// console's wall clock moves a second on.
func pause(m *Model) {
	prev := m.wall
	m.wall = func() time.Time { return prev().Add(time.Second) }
}
