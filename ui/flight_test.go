package ui

import (
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"golang.org/x/crypto/ssh"
	_ "modernc.org/sqlite" // a second writer's connection, to hold the lock

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// holdLock takes the ledger's write lock from another connection, as
// another process writing would, and returns what releases it.
func holdLock(t *testing.T) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:ledger.db?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			tx.Rollback()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// lockedApproval opens a console on a pending key, takes the ledger's
// lock from another connection, and confirms an approval of the key,
// which then waits for the lock; it returns the console and what
// releases the lock.
func lockedApproval(t *testing.T, f *fixture, key, body string) (*console, func()) {
	t.Helper()
	f.guard(key, "refund", body, "refund-bot")
	tm := f.console(120, 30, false, "alice")
	waitFor(t, tm, body)
	release := holdLock(t)
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "waiting for the ledger")
	return tm, release
}

// TestQuitHeldWhileDecisionInFlight: q while an approval waits for a
// locked ledger does not quit: the console says the decision is not yet
// confirmed, keeps its spinner, and lets the decision land; once it has,
// q quits at once.
func TestQuitHeldWhileDecisionInFlight(t *testing.T) {
	f := newFixture(t)
	tm, release := lockedApproval(t, f, "refund:le-1", "refund 10 EUR")
	tm.Send(press("q"))
	waitFor(t, tm, "not yet confirmed: approve refund:le-1")
	waitFor(t, tm, "q again quits")
	release()
	waitFor(t, tm, "approve: 1 done (refund:le-1)")
	tm.Send(press("q")) // landed: q quits at once
	tm.WaitFinished(t, teatest.WithFinalTimeout(slowdown*20*time.Second))
	m := tm.FinalModel(t).(*Model)
	if m.Unconfirmed() != "" {
		t.Fatalf("a landed decision is reported unconfirmed: %s", m.Unconfirmed())
	}
	if d, _ := f.s.Status(ctx, "refund:le-1"); d.State != ledger.StateApproved {
		t.Fatalf("state = %s", d.State)
	}
}

// TestSecondQuitSaysWhatWasNotConfirmed: a second q within a second of
// the first quits, and says which decision the ledger never confirmed.
func TestSecondQuitSaysWhatWasNotConfirmed(t *testing.T) {
	f := newFixture(t)
	tm, _ := lockedApproval(t, f, "refund:le-2", "refund 20 EUR")
	tm.Send(press("q"))
	waitFor(t, tm, "not yet confirmed")
	tm.Send(press("q")) // the test clock stands still: within the second
	tm.WaitFinished(t, teatest.WithFinalTimeout(slowdown*20*time.Second))
	m := tm.FinalModel(t).(*Model)
	u := m.Unconfirmed()
	for _, want := range []string{"approve refund:le-2", "not confirmed", "tollgate status refund:le-2"} {
		if !strings.Contains(u, want) {
			t.Fatalf("the quit says %q, which lacks %q", u, want)
		}
	}
	if !strings.Contains(m.View(), "not confirmed") {
		t.Fatalf("the last frame does not say it:\n%s", m.View())
	}
}

// TestLockedLedgerWaitIsShownAndCancelled: with another writer holding
// the ledger, a decision shows "waiting for the ledger" and how long, a
// second decision is refused meanwhile, and esc stops waiting: the key
// stays pending and the console says the approval was not recorded.
func TestLockedLedgerWaitIsShownAndCancelled(t *testing.T) {
	f := newFixture(t)
	tm, _ := lockedApproval(t, f, "refund:lk-1", "refund 30 EUR")
	waitFor(t, tm, "waiting for the ledger 0s: approve refund:lk-1 · esc stops waiting")
	tm.Send(press("r"))
	waitFor(t, tm, "one decision at a time: approve refund:lk-1 is still waiting for the ledger")
	tm.Send(press("esc"))
	waitFor(t, tm, "stopped waiting: approve refund:lk-1 not recorded")
	m := finalModel(t, tm)
	if m.dialog != nil {
		t.Fatal("a second decision's dialog opened while the first waited")
	}
	if d, _ := f.s.Status(ctx, "refund:lk-1"); d.State != ledger.StatePending {
		t.Fatalf("refund:lk-1 is %s", d.State)
	}
}

// TestQuorumVoteIsNotDone: one approval of a two-operator quorum reads
// "1 of 2 approvals (NAME); waiting for one more", from this console or
// from another operator's, never "done" or "approved by", and the key
// stays pending in the list and the detail.
func TestQuorumVoteIsNotDone(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := newSignedFixtureWith(t, alice, 2)
	if _, err := f.s.AddOperator(ctx, "bob", opkeys.Line(bob.PublicKey())); err != nil {
		t.Fatal(err)
	}
	f.guard("refund:q-1", "refund", "refund 99 EUR", "refund-bot")
	f.guard("refund:q-2", "refund", "refund 98 EUR", "refund-bot")
	tm := f.console(120, 30, false, "")
	waitFor(t, tm, "0 of 2 approvals")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "refund:q-1: 1 of 2 approvals (alice); waiting for one more")
	// bob votes on the other key, from his own process.
	tm.Send(press("j"))
	waitFor(t, tm, "refund 98 EUR")
	sb := openAs(t, f, bob)
	if _, err := sb.Approve(ctx, "refund:q-2", "", "fine by me"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "refund:q-2: 1 of 2 approvals (bob); waiting for one more")
	m := finalModel(t, tm)
	for _, e := range m.log.entries {
		if strings.Contains(e.text, "approve done") || strings.Contains(e.text, "approved by") {
			t.Fatalf("a vote short of its quorum was reported as done: %q", e.text)
		}
	}
	for _, it := range m.list().items {
		if it.State != ledger.StatePending {
			t.Fatalf("%s listed as %s", it.Key, it.State)
		}
	}
	if v := m.View(); !strings.Contains(v, "state      pending") {
		t.Fatalf("the detail does not say pending:\n%s", v)
	}
}

// openAs opens the fixture's ledger with another operator's key.
func openAs(t *testing.T, f *fixture, sg ssh.Signer) *ledger.Store {
	t.Helper()
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: f.clock.Now, Signers: []ssh.Signer{sg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFlightGolden: the message line while a decision is in flight, and
// after one q, at the smallest and a wide screen (the answer is held
// back: the command is not run).
func TestFlightGolden(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{60, 20}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFixture(t)
			f.guard("refund:customer-4411-2026-12-01-a", "refund", "refund 10 EUR", "refund-bot")
			m := f.model(sz.w, sz.h, io.Discard)
			m.Update(dialogDoneMsg{confirmed: true, kind: dlgApprove, targets: []target{{Key: "refund:customer-4411-2026-12-01-a"}}})
			m.Update(press("q"))
			if m.deciding == nil {
				t.Fatal("q dropped the decision in flight")
			}
			requireGolden(t, m.View())
		})
	}
}
