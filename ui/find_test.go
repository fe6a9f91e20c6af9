package ui

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tollgate-dev/tollgate/ledger"
)

// modelWith is f.model with opt's Bell.
func (f *fixture) modelWith(w, h int, bell io.Writer) *Model {
	f.t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	m, err := New(Options{Store: f.s, Operator: "alice", Renderer: r, Clipboard: io.Discard, Bell: bell,
		Now: func() time.Time { return time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) }, Refresh: time.Hour})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { m.Close() })
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	drain(m, m.snapshot())
	return m
}

func cursorKey(m *Model) string {
	it, _ := m.list().current()
	return it.Key
}

// TestJumpToKeyAsTyped: ' opens a prompt that moves the cursor to the
// key typed, as it is typed (a prefix first, else any key containing
// it); enter keeps the row, esc goes back; a key not loaded is said.
func TestJumpToKeyAsTyped(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"refund:apple-1", "refund:pear-2", "refund:plum-3", "refund:fig-4"} {
		f.guard(k, "refund", "x", "bot")
	}
	m := f.model(100, 30, io.Discard)
	start := cursorKey(m)
	step(m, press("'"))
	step(m, press("refund:pe"))
	if got := cursorKey(m); got != "refund:pear-2" {
		t.Fatalf("after typing refund:pe the cursor is on %s", got)
	}
	if !strings.Contains(m.View(), "'refund:pe") {
		t.Fatalf("the prompt is not shown:\n%s", m.View())
	}
	step(m, press("esc"))
	if got := cursorKey(m); got != start {
		t.Fatalf("esc left the cursor on %s, not %s", got, start)
	}
	step(m, press("'"))
	step(m, press("plum")) // no prefix: contained
	step(m, press("enter"))
	if got := cursorKey(m); got != "refund:plum-3" || !strings.Contains(m.notice, "jumped to 1 of 1") {
		t.Fatalf("cursor on %s, said %q", got, m.notice)
	}
	step(m, press("'"))
	step(m, press("nowhere"))
	if !strings.Contains(m.lastErr, `no loaded key matches "nowhere"`) {
		t.Fatalf("a missing key said %q", m.lastErr)
	}
	step(m, press("esc"))
	step(m, press("q")) // the prompt is closed: q is a key again
}

// TestNextMatchSteps: n and N step through the rows matching the jump
// text, wrapping, and say which match of how many; with a filter and no
// jump text they step through the filter's rows.
func TestNextMatchSteps(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"refund:a-1", "refund:b-1", "refund:a-2", "refund:b-2", "refund:a-3"} {
		f.guard(k, "refund", "x", "bot")
		f.clock.Add(time.Second)
	}
	m := f.model(100, 30, io.Discard) // soonest deadline first: a-1 … a-3
	step(m, press("n"))
	if !strings.Contains(m.notice, "' jumps to a key") {
		t.Fatalf("n with nothing to match said %q", m.notice)
	}
	step(m, press("'"))
	step(m, press(":a-"))
	step(m, press("enter"))
	for _, want := range []struct{ key, press, said string }{
		{"refund:a-2", "n", "match 2 of 3"},
		{"refund:a-3", "n", "match 3 of 3"},
		{"refund:a-1", "n", "match 1 of 3"}, // wraps
		{"refund:a-3", "N", "match 3 of 3"}, // wraps back
	} {
		step(m, press(want.press))
		if got := cursorKey(m); got != want.key || !strings.Contains(m.notice, want.said) {
			t.Fatalf("%s: cursor on %s, said %q; want %s, %q", want.press, got, m.notice, want.key, want.said)
		}
	}
	step(m, press("'"))
	step(m, press("enter")) // an empty jump forgets its text
	step(m, press("/"))
	step(m, press("b-"))
	step(m, press("enter"))
	step(m, press("n"))
	if got := cursorKey(m); got != "refund:b-2" || !strings.Contains(m.notice, `match 2 of 2 for the filter "b-"`) {
		t.Fatalf("n in the filter: cursor on %s, said %q", got, m.notice)
	}
}

// TestBellWhenUncertain: the bell rings once when an action turns
// uncertain (its lease ran out with no report), not at the first load,
// nor when nothing changed; the log says why.
func TestBellWhenUncertain(t *testing.T) {
	f := newFixture(t)
	f.guard("report:first", "report", "x", "bot")
	f.clock.Add(2 * time.Minute) // uncertain before the console opens: no bell
	bell := &syncBuffer{}
	m := f.modelWith(100, 30, bell)
	f.guard("report:late", "report", "x", "bot")
	drain(m, m.snapshot())
	if bell.String() != "" {
		t.Fatalf("rang %q before anything turned uncertain", bell.String())
	}
	f.clock.Add(2 * time.Minute)
	drain(m, m.snapshot())
	if bell.String() != "\a" {
		t.Fatalf("the bell wrote %q, want one BEL", bell.String())
	}
	drain(m, m.snapshot())
	if bell.String() != "\a" {
		t.Fatalf("rang again with nothing new: %q", bell.String())
	}
	if !strings.Contains(m.log.View(), "bell: 1 more uncertain") {
		t.Fatalf("the log does not say why it rang:\n%s", m.log.View())
	}
	if bellOn("off") || bellOn(" OFF ") || bellOn("0") || !bellOn("") || !bellOn("on") {
		t.Fatal("TOLLGATE_BELL is misread")
	}
}

// TestCursorRowLeavingIsSaid: when the row under the cursor leaves the
// view, the message line says so and where the cursor went: filtered
// out, or settled by another process (its new state).
func TestCursorRowLeavingIsSaid(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:keep", "refund", "x", "bot")
	f.guard("report:gone", "report", "x", "bot")
	f.guard("report:stay", "report", "x", "bot")
	f.clock.Add(2 * time.Minute) // both reports uncertain
	m := f.model(100, 30, io.Discard)
	step(m, press("3"))
	for cursorKey(m) != "report:gone" {
		step(m, press("j"))
	}
	other := f.other()
	if _, err := other.Reconcile(ctx, "report:gone", ledger.ResultExecuted, "bob", "checked the bank"); err != nil {
		t.Fatal(err)
	}
	drain(m, m.snapshot())
	if !strings.Contains(m.notice, "report:gone left Uncertain outcomes: now reconciled") || !strings.Contains(m.notice, "the cursor is on report:stay") {
		t.Fatalf("the row leaving was not said: %q", m.notice)
	}
	step(m, press("/"))
	step(m, press("zzz"))
	if !strings.Contains(m.notice, "report:stay is filtered out of Uncertain outcomes") {
		t.Fatalf("filtering the row out said %q", m.notice)
	}
}

// TestHelpScrollsAtFortyByTwelve: at 40x12 the help page does not fit;
// it lists one binding a line, says which lines it shows, and j, G
// scroll it to every binding, the last included.
func TestHelpScrollsAtFortyByTwelve(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:h-1", "refund", "x", "bot")
	m := f.model(40, 12, io.Discard)
	step(m, press("?"))
	if v := m.View(); !strings.Contains(v, "lines 1-5 of 24 · j/k scroll") || !strings.Contains(v, "↑/k       up") {
		t.Fatalf("the help page's first lines:\n%s", v)
	}
	step(m, press("j"))
	if v := m.View(); !strings.Contains(v, "lines 2-6 of 24") {
		t.Fatalf("j did not scroll:\n%s", v)
	}
	step(m, press("G"))
	if v := m.View(); !strings.Contains(v, "v         mark reviewed") || !strings.Contains(v, "lines 20-24 of 24") {
		t.Fatalf("G did not reach the last binding:\n%s", v)
	}
	if m.active != viewPending {
		t.Fatal("a key for the help page moved the views")
	}
}

// TestStaleEpochPendingMarked: a key pending under an epoch no longer
// active (listed under Fenced as the epoch changed) stays in Pending,
// where a rejection still applies, but is marked there and in the
// detail pane, and a is refused for it (left out of a batch) instead of
// opening a dialog whose approval the ledger would fence.
func TestStaleEpochPendingMarked(t *testing.T) {
	f := viewFixture(t)
	m := f.model(120, 40, io.Discard)
	if cursorKey(m) != "refund:pre-epoch" {
		t.Fatalf("the cursor is on %s", cursorKey(m))
	}
	v := m.View()
	if !strings.Contains(v, "pending ⊘") || !strings.Contains(v, "never approved (also under Fenced); r rejects it") {
		t.Fatalf("the stale key is not marked:\n%s", v)
	}
	if strings.Count(v, "⊘") != 1 {
		t.Fatalf("a key of the active epoch is marked too:\n%s", v)
	}
	step(m, press("a"))
	if m.dialog != nil || !strings.Contains(m.lastErr, "refund:pre-epoch is under a stale epoch") {
		t.Fatalf("a on a stale key: dialog %v, said %q", m.dialog != nil, m.lastErr)
	}
	pause(m) // keys typed right after a refusal are dropped
	step(m, press("*"))
	step(m, press("a"))
	if m.dialog == nil || !strings.Contains(m.notice, "left out of the approval: refund:pre-epoch") {
		t.Fatalf("a batch with a stale key: dialog %v, said %q", m.dialog != nil, m.notice)
	}
	if v := m.View(); strings.Contains(v, "• refund:pre-epoch") || !strings.Contains(v, "Approve 3 actions?") {
		t.Fatalf("the batch dialog:\n%s", v)
	}
	step(m, press("esc"))
	step(m, press("*")) // clears
	step(m, press("r"))
	if m.dialog == nil {
		t.Fatalf("r on a stale key opened no dialog: %q", m.lastErr)
	}
}

// TestFindAndSortInARunningConsole is the same keys through a real
// program (teatest): s and S mark the header, ' jumps as typed and n
// says which match it is; the status bar's clock is labelled.
func TestFindAndSortInARunningConsole(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"refund:a-1", "refund:b-1", "refund:a-2"} {
		f.guard(k, "refund", "body of "+k, "bot")
		f.clock.Add(time.Second)
	}
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "· updated 09:30:00Z")
	waitFor(t, tm, "due ▲")
	tm.Send(press("s"))
	waitFor(t, tm, "key (newest first)")
	tm.Send(press("s"))
	waitFor(t, tm, "key ▲")
	tm.Send(press("S"))
	waitFor(t, tm, "key ▼")
	tm.Send(press("'"))
	tm.Type("refund:a-")
	waitFor(t, tm, "body of refund:a-2") // key ▼: a-2 is the first a- row
	tm.Send(press("enter"))
	waitFor(t, tm, `jumped to 1 of 2 for "refund:a-"`)
	tm.Send(press("n"))
	waitFor(t, tm, "body of refund:a-1")
	waitFor(t, tm, `match 2 of 2 for "refund:a-"`)
	final(t, tm)
}

// TestLocalSortPagesOn: sorted by a column the ledger does not page by
// (key), the next page continues the ledger's own order, so every row
// arrives once and the loaded rows stay sorted by key.
func TestLocalSortPagesOn(t *testing.T) {
	f := newFixture(t)
	const n = 4*pageSize + 50 // past what the reloads after s load (each a page more)
	for i := 0; i < n; i++ {
		// Keys in an order unlike their age.
		f.guard(fmt.Sprintf("k:%03d", (i*37)%n), "refund", "x", "bot")
	}
	m := f.model(80, 24, io.Discard)
	step(m, press("s")) // age
	step(m, press("s")) // key ▲
	for i := 0; i < 5 && len(m.list().items) < n; i++ {
		step(m, press("G"))
	}
	keys := listedKeys(m)
	if len(keys) != n {
		t.Fatalf("loaded %d rows of %d", len(keys), n)
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("not sorted by key: %v", keys[:10])
	}
	if len(slices.Compact(slices.Clone(keys))) != n {
		t.Fatal("a row listed twice")
	}
}
