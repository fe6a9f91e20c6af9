package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// screenSizes are the terminals the console is checked at: the common
// default, the smallest that keeps every decision's keys on screen, a
// wide one whose layout differs (list and detail side by side), the
// smallest it draws at all, and a large one below the side by side.
var screenSizes = []struct{ w, h int }{{80, 24}, {60, 20}, {200, 60}, {40, 12}, {120, 40}}

// screenFixture is a ledger with what each screen needs: pending keys
// with a deadline within ten minutes and a long target, the operator's
// own request (refused on approval), an uncertain key.
func screenFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.s.SetPolicy(ctx, approvals.Rule{Pattern: "urgent", Mode: approvals.Approval, TTL: 35 * time.Minute}, "root")
	for i := 0; i < 5; i++ {
		if _, err := f.s.Guard(ctx, fmt.Sprintf("refund:s-%d", i), ledger.Payload{Kind: "refund", Target: "acct-" + strings.Repeat("9", 40*i+1),
			Body: fmt.Sprintf("refund %d EUR", 10*i)}, ledger.GuardOptions{Agent: "refund-bot"}); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(time.Minute)
	}
	f.guard("urgent:u-1", "urgent", "page the on-call", "pager-bot") // due 09:40, within ten minutes of 09:30
	f.guard("refund:own", "refund", "mine", "alice")
	f.guard("report:lost", "report", "weekly", "report-bot") // its one-minute lease lapses unreported: uncertain
	f.clock.Add(26 * time.Minute)                            // 09:31
	return f
}

// TestScreensGolden renders each screen whose defects were fixed at
// every size: the Pending list (kind and due columns, the soonest first,
// one due soon), the batch dialog (every key with kind, target and
// digest; note and confirm line on screen), the help (every binding),
// the message log (a batch's done and refused keys, whole), a filter
// that hides everything, and the reconcile dialog (no preselected
// result).
func TestScreensGolden(t *testing.T) {
	runScreens(t, screenSizes, screenFixture, []screen{
		{name: "pending"},
		{name: "batch-dialog", keys: []tea.Msg{press("*"), press("a")}},
		{name: "help", keys: []tea.Msg{press("?")}},
		{name: "message-log", keys: []tea.Msg{press("*"), press("a"), press("enter"), press("L")}},
		{name: "filter-hides-all", keys: []tea.Msg{press("/"), press("z"), press("z"), press("enter")}},
		{name: "reconcile-dialog", keys: []tea.Msg{press("3"), press("c")}},
	})
}

// screen is one frame to check: the keys sent, then what run does.
type screen struct {
	name string
	keys []tea.Msg
	run  func(t *testing.T, f *fixture, m *Model)
}

// runScreens checks each screen at each size, on a fresh fixture each,
// against testdata/<test>/<name>-<w>x<h>.golden.
//
// Under -race -short (CI's race run, after the plain run has compared
// every golden) only 60x20 is checked: the frames are drawn by hand,
// with no goroutine of the console's own, so the sweep finds no race and
// would cost minutes at the race detector's speed.
func runScreens(t *testing.T, sizes []struct{ w, h int }, fixture func(*testing.T) *fixture, screens []screen) {
	for _, sz := range sizes {
		if testing.Short() && slowdown > 1 && (sz.w != 60 || sz.h != 20) {
			continue
		}
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				f := fixture(t)
				m := f.model(sz.w, sz.h, io.Discard)
				for _, k := range sc.keys {
					step(m, k)
				}
				if sc.run != nil {
					sc.run(t, f, m)
				}
				requireScreen(t, m.View(), sz.w, sz.h)
			})
		}
	}
}

// requireScreen checks that a frame fits w x h and matches its golden.
func requireScreen(t *testing.T, view string, w, h int) {
	t.Helper()
	for i, line := range strings.Split(view, "\n") {
		if lipgloss.Width(line) > w {
			t.Fatalf("line %d is %d cells wide at %dx%d:\n%s", i, lipgloss.Width(line), w, h, view)
		}
	}
	if n := strings.Count(view, "\n") + 1; n > h {
		t.Fatalf("%d lines at %dx%d:\n%s", n, w, h, view)
	}
	requireGolden(t, view)
}
