package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
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

// TestRefusedDecisionDropsTheRestOfItsBurst: a decision key refused in a
// burst (c on a pending key) opens no input, so the note typed after it
// would run as commands: "crejected" would open a rejection of the row
// under the cursor with "ejected" as its reason, one enter from
// rejecting a key the operator meant to write a note about. The rest of
// the burst is dropped, and the console says so.
func TestRefusedDecisionDropsTheRestOfItsBurst(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:b-1", "refund", "body 1", "refund-bot")
	m := f.model(100, 30, io.Discard)
	step(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("crejected")})
	if m.dialog != nil {
		t.Fatalf("the keys typed after a refused c opened a dialog:\n%s", m.View())
	}
	if !strings.Contains(m.lastErr, "reconcile applies to uncertain") || !strings.Contains(m.lastErr, `dropped: "rejected"`) {
		t.Fatalf("message line: %q", m.lastErr)
	}
	// A burst whose decision key opens its dialog still types the rest.
	step(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("rno such order")})
	if m.dialog == nil || !strings.Contains(m.View(), "no such order") {
		t.Fatalf("a reject typed with its reason:\n%s", m.View())
	}
}
