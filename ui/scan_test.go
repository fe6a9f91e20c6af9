package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tollgate-dev/tollgate/internal/benchledger"
	"github.com/tollgate-dev/tollgate/ledger"
)

// scanTotal is the settled actions of the scan tests: 30 windows of
// scanTestWindow ids.
const (
	scanTotal      = 30_000
	scanTestWindow = 1_000
)

// settledLedger is a fixture on a copy of the cached ledger of
// scanTotal recorded (settled) actions, bulk:action-0000000 (id 1) to
// bulk:action-0029999, by agent-0 to agent-12 in turn.
func settledLedger(t *testing.T) *fixture {
	t.Helper()
	src, err := benchledger.Path(scanTotal, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := benchledger.Copy(src, "ledger.db"); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &fixture{t: t, s: s, clock: c}
}

// scanModel is the console on the fixture's ledger, its first load done,
// with small scan windows.
func scanModel(t *testing.T, f *fixture) *Model {
	t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	m, err := New(Options{Store: f.s, Operator: "op", ReadOnly: true, Renderer: r, scanWindow: scanTestWindow,
		Now: func() time.Time { return time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if held := pump(m, m.snapshot()); len(held) != 0 {
		t.Fatal("the Pending view scanned")
	}
	if held := pump(m, m.switchView(viewAll)); len(held) != 0 {
		t.Fatal("the unfiltered All view scanned")
	}
	return m
}

// pump runs cmd and what follows from it as the runtime would (ticks
// excluded, as in drain), but holds back the scan's windows: they are
// returned, for the test to deliver (or not) one at a time.
func pump(m *Model, cmd tea.Cmd) (held []scanMsg) {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if t := fmt.Sprintf("%T", msg); strings.HasPrefix(t, "cursor.") || strings.HasPrefix(t, "spinner.") || t == "ui.tickMsg" ||
		t == "ui.authorityTickMsg" || t == "ui.identityTickMsg" {
		return nil
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			held = append(held, pump(m, c)...)
		}
	case scanMsg:
		held = append(held, msg)
	case nil:
	default:
		_, next := m.Update(msg)
		held = append(held, pump(m, next)...)
	}
	return held
}

// deliver hands the model one window and returns the windows it asks for next.
func deliver(m *Model, msg scanMsg) []scanMsg {
	_, cmd := m.Update(msg)
	return pump(m, cmd)
}

// typeFilter types text into the filter (opening it first if need be).
func typeFilter(m *Model, text string) []scanMsg {
	held := []scanMsg{}
	if !m.filter.Typing() {
		held = append(held, pump(m, m.key(press("/")))...)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)})
	return append(held, pump(m, cmd)...)
}

// scanAll delivers windows until none is asked for, returning how many.
func scanAll(t *testing.T, m *Model, held []scanMsg) int {
	t.Helper()
	n := 0
	for len(held) > 0 {
		if len(held) != 1 {
			t.Fatalf("%d windows out at once", len(held))
		}
		held = deliver(m, held[0])
		n++
	}
	return n
}

// TestScanNoMatch: a filter of All that matches nothing reads settled
// history in windows, showing how far it has come, and ends saying it
// read every action; before windows, it read the whole table in one query.
func TestScanNoMatch(t *testing.T) {
	m := scanModel(t, settledLedger(t))
	held := typeFilter(m, "zzz-nothing")
	if len(held) != 1 {
		t.Fatalf("the filter asked for %d windows, want 1", len(held))
	}
	if v := m.View(); !strings.Contains(v, "scanning 0 of 30,000 actions… 0 found") {
		t.Fatalf("no progress before the first window:\n%s", v)
	}
	held = deliver(m, held[0])
	if v := m.View(); !strings.Contains(v, "scanning 1,000 of 30,000 actions… 0 found") {
		t.Fatalf("no progress after the first window:\n%s", v)
	}
	if n := 1 + scanAll(t, m, held); n != scanTotal/scanTestWindow {
		t.Fatalf("%d windows read, want %d", n, scanTotal/scanTestWindow)
	}
	v := m.View()
	if !strings.Contains(v, `Nothing here matches the filter "zzz-nothing"`) || !strings.Contains(v, "all 30,000 actions scanned") {
		t.Fatalf("no 'no match' after the whole scan:\n%s", v)
	}
	// A refresh adds what was recorded since, without scanning again.
	if _, err := m.store.(*ledger.Store).Record(ctx, "note:zzz-nothing-new", ledger.Payload{Kind: "note", Target: "t", Body: "b"},
		ledger.RecordOptions{}); err != nil {
		t.Fatal(err)
	}
	if held := pump(m, m.snapshot()); len(held) != 0 {
		t.Fatal("a refresh scanned again")
	}
	if v := m.View(); !strings.Contains(v, "note:zzz-nothing-new") {
		t.Fatalf("a refresh did not add the row recorded since:\n%s", v)
	}
}

// TestScanFindsOldRows: a filter matching only the oldest rows reads
// down to id 1 and lists them, newest first, each once.
func TestScanFindsOldRows(t *testing.T) {
	m := scanModel(t, settledLedger(t))
	scanAll(t, m, typeFilter(m, "action-00000"))
	items := m.list().items
	if len(items) != 100 || items[0].Key != "bulk:action-0000099" || items[99].Key != "bulk:action-0000000" {
		t.Fatalf("found %d rows (%v...), want bulk:action-0000099 down to bulk:action-0000000", len(items), items[:min(len(items), 2)])
	}
	if v := m.View(); !strings.Contains(v, "bulk:action-0000099") {
		t.Fatalf("the old rows are not shown:\n%s", v)
	}
}

// TestScanNewFilterDropsOldScan: a filter typed mid-scan starts a new
// scan; a window of the old one that lands after is dropped, not added.
func TestScanNewFilterDropsOldScan(t *testing.T) {
	m := scanModel(t, settledLedger(t))
	held := typeFilter(m, "action-0000")
	for held[0].before > scanTestWindow+1 { // up to the window holding the old rows
		held = deliver(m, held[0])
	}
	stale := held[0]
	if len(stale.items) == 0 {
		t.Fatal("the held window has no rows: the test proves nothing")
	}
	fresh := typeFilter(m, "0") // now "action-00000"
	if held := deliver(m, stale); len(held) != 0 || len(m.list().items) != 0 {
		t.Fatalf("the old scan's window was added: %d rows, %d windows asked", len(m.list().items), len(held))
	}
	if v := m.View(); !strings.Contains(v, "scanning 0 of 30,000") {
		t.Fatalf("the new scan's progress moved with the old one's window:\n%s", v)
	}
	scanAll(t, m, fresh)
	if n := len(m.list().items); n != 100 {
		t.Fatalf("the new scan found %d rows, want 100", n)
	}
}

// TestScanKeysWork: while a scan runs, keys move the cursor through the
// rows found so far, and q quits.
func TestScanKeysWork(t *testing.T) {
	m := scanModel(t, settledLedger(t))
	held := typeFilter(m, "agent-12")  // one row in 13: a page takes three windows
	_ = pump(m, m.key(press("enter"))) // the filter keeps its text, the list has the keys
	held = deliver(m, held[0])
	held = deliver(m, held[0])
	if !m.list().scan.running || len(m.list().items) < 2 {
		t.Fatalf("after two windows: running %v, %d rows", m.list().scan.running, len(m.list().items))
	}
	if held := pump(m, m.key(press("j"))); len(held) != 0 {
		t.Fatal("a move started a window")
	}
	if it, _ := m.list().current(); it.Key != m.list().items[1].Key {
		t.Fatalf("j did not move during the scan: on %s", it.Key)
	}
	if found := len(m.list().items); !strings.Contains(m.View(), fmt.Sprintf("%d shown · scanning 2,000 of 30,000", found)) {
		t.Fatalf("no progress under the rows:\n%s", m.View())
	}
	if held = deliver(m, held[0]); len(held) != 0 { // the scan goes on after the key
		t.Fatal("the scan did not pause with a page found")
	}
	if l := m.list(); len(l.items) != pageSize || l.scan.running || !l.more {
		t.Fatalf("after three windows: %d rows, running %v, more %v; want a page, paused", len(l.items), l.scan.running, l.more)
	}
	if cmd := m.key(press("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q did not quit during the scan")
	}
}

// TestScanRuns: in the running program, a filter that matches nothing
// shows its progress, then that it read every action.
func TestScanRuns(t *testing.T) {
	f := settledLedger(t)
	tm := f.run(Options{Store: f.s, Operator: "op", ReadOnly: true, scanWindow: scanTestWindow}, 100, 30)
	waitFor(t, tm, "Pending")
	tm.Send(press("5"))
	waitFor(t, tm, "bulk:action-0029999")
	tm.Send(press("/"))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("zzz")})
	waitFor(t, tm, "of 30,000 actions…")
	waitFor(t, tm, "all 30,000 actions scanned")
	final(t, tm)
}
