package ui

import (
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// viewSizes are the sizes issue 29 was tried at: every view has a
// golden at each.
var viewSizes = []struct{ w, h int }{{40, 12}, {60, 20}, {120, 40}, {200, 60}}

// epochKey is a key of the fixture's active epoch.
const epochKey = "hsr1:11111111-2222-4333-8444-555555555555:"

// viewFixture has something in every view: two pending keys that differ
// only in their tails, a conflict, an uncertain key, fenced calls (one
// from before the epoch, one plain key after it).
func viewFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.guard("refund:pre-epoch", "refund", "before the epoch", "old-bot")
	f.s.ActivateEpoch(ctx, "11111111-2222-4333-8444-555555555555", "root")
	f.guard("refund:late-call", "refund", "x", "legacy-bot")
	f.guard(epochKey+"refund:customer-4411-2026-12-01-a", "refund", "refund 10 EUR", "refund-bot")
	f.guard(epochKey+"refund:customer-4411-2026-12-01-b", "refund", "refund 12 EUR", "refund-bot")
	f.guard(epochKey+"refund:dup", "refund", "refund 10 EUR", "refund-bot")
	f.guard(epochKey+"refund:dup", "refund", "refund 99 EUR", "refund-bot")
	f.guard(epochKey+"report:lost", "report", "weekly", "report-bot") // its lease lapses: uncertain
	f.clock.Add(2 * time.Minute)
	return f
}

// TestEveryViewGolden renders every view at the four sizes: each list
// with its detail, the full key view, the reject and review dialogs, a
// decision in flight, the banner of a replaced ledger file and a dialog
// gone stale. (The batch and reconcile dialogs, help, the message log
// and the filter are TestScreensGolden's.) Each frame fits its size.
// go test ./ui -run TestEveryViewGolden -update rewrites them.
func TestEveryViewGolden(t *testing.T) {
	runScreens(t, viewSizes, viewFixture, []screen{
		{name: "pending"},
		{name: "conflicts", keys: []tea.Msg{press("2")}},
		{name: "uncertain", keys: []tea.Msg{press("3")}},
		{name: "fenced", keys: []tea.Msg{press("4")}},
		{name: "all", keys: []tea.Msg{press("5")}},
		{name: "full-key", keys: []tea.Msg{press("f")}},
		{name: "reject-dialog", keys: []tea.Msg{press("r")}},
		{name: "review-dialog", keys: []tea.Msg{press("2"), press("v")}},
		{name: "in-flight", run: func(t *testing.T, f *fixture, m *Model) {
			// The answer is held back: the command is not run.
			m.Update(dialogDoneMsg{confirmed: true, kind: dlgApprove, targets: []target{{Key: epochKey + "refund:customer-4411-2026-12-01-a"}}})
		}},
		{name: "file-deleted", run: func(t *testing.T, f *fixture, m *Model) {
			// Not drained: each check re-arms the next, for ever.
			m.Update(readIdentity(ctx, f.s, m.ident.file)())
			if err := os.Rename("ledger.db", "moved.db"); err != nil {
				t.Fatal(err)
			}
			m.Update(readIdentity(ctx, f.s, m.ident.file)())
		}},
		{name: "stale-dialog", keys: []tea.Msg{press("*"), press("a")}, run: func(t *testing.T, f *fixture, m *Model) {
			if _, err := f.other().Approve(ctx, epochKey+"refund:dup", "bob", "fine"); err != nil {
				t.Fatal(err)
			}
			drain(m, m.snapshot())
		}},
	})
}
