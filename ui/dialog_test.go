package ui

import (
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestDialogProblemClearsOnceAnswered: the line saying what a confirm
// lacked ("choose the result first", "a reason is required") leaves the
// dialog as soon as the operator supplies it, instead of staying on
// screen, as a refusal, over a dialog that is now ready to confirm.
func TestDialogProblemClearsOnceAnswered(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	st, km := NewStyles(r), DefaultKeyMap()
	enter, tab := tea.KeyMsg{Type: tea.KeyEnter}, tea.KeyMsg{Type: tea.KeyTab}
	typed := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("checked the provider")}
	ts := []target{{Key: "report:q4", Digest: strings.Repeat("a", 64), Kind: "report", Subject: "acct-7"}}

	// Each step: a kind of dialog, enter to be told what is missing, then
	// what supplies it.
	for _, c := range []struct {
		kind    dialogKind
		chosen  bool // the reconcile result chosen first
		problem string
		answer  tea.Msg
	}{
		{dlgReconcile, false, "choose the result first", tab},
		{dlgReconcile, true, "a note is required", typed},
		{dlgReject, false, "a reason is required", typed},
	} {
		d := newDialog(c.kind, ts, &st, &km)
		d.SetSize(80, 20)
		if c.chosen {
			d, _ = d.Update(tab) // the note is what is missing
		}
		d, _ = d.Update(enter)
		if !strings.Contains(d.View(), c.problem) {
			t.Fatalf("enter does not say %q:\n%s", c.problem, d.View())
		}
		d, _ = d.Update(c.answer)
		if v := d.View(); strings.Contains(v, c.problem) {
			t.Errorf("answered, and the dialog still says %q:\n%s", c.problem, v)
		}
	}
}

// TestDecisionKeyFromHelpShowsTheDialog: a decision key pressed while the
// help page is open opens its confirmation where it can be read; before,
// the dialog opened under the help page and the next enter approved a
// key whose confirmation (key, digest) was never on screen.
func TestDecisionKeyFromHelpShowsTheDialog(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:h-1", "refund", "40 EUR", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:h-1")
	tm.Send(press("?"))
	waitFor(t, tm, "select all / none")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	if m := finalModel(t, tm); m.dialog == nil || m.showHelp {
		t.Errorf("dialog open %v, help open over it %v", m.dialog != nil, m.showHelp)
	}
}

// TestTinyDialogNamesTheKey: at 40x12 a dialog has room for one line of
// each key; a key under an epoch (hsr1:<epoch>:refund:dup) showed only
// "hsr1:11111111-2222-4333-8444-", so the operator confirmed a decision
// without seeing which key. The line is the logical key, as the list
// shows it, cut in the middle when it is longer.
func TestTinyDialogNamesTheKey(t *testing.T) {
	f := viewFixture(t)
	m := f.model(40, 12, io.Discard)
	step(m, press("2"))
	step(m, press("v"))
	if v := m.View(); !strings.Contains(v, "• refund:dup") {
		t.Fatalf("the review dialog at 40x12 does not name its key:\n%s", v)
	}
	step(m, press("esc"))
	step(m, press("1"))
	for i := 0; i < 5 && cursorKey(m) != epochKey+"refund:customer-4411-2026-12-01-a"; i++ {
		step(m, press("j"))
	}
	step(m, press("r"))
	if v := m.View(); !strings.Contains(v, "• refund:customer…411-2026-12-01-a") {
		t.Fatalf("the reject dialog at 40x12 does not name its key:\n%s", v)
	}
}

// TestReviewDialogNamesTheEntry: v marks a log entry reviewed, not an
// action (the key keeps its own state): the dialog says "conflict" or
// "fenced call", not "Mark reviewed 1 action?".
func TestReviewDialogNamesTheEntry(t *testing.T) {
	f := viewFixture(t)
	m := f.model(120, 40, io.Discard)
	for _, c := range []struct{ view, want string }{{"2", "Mark reviewed 1 conflict?"}, {"4", "Mark reviewed 1 fenced call?"}} {
		step(m, press(c.view))
		step(m, press("v"))
		if v := m.View(); !strings.Contains(v, c.want) {
			t.Fatalf("want %q:\n%s", c.want, v)
		}
		step(m, press("esc"))
	}
}
