package ui

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOutageKeepsTheDecisionsResult: while the ledger cannot be read (a
// PostgreSQL server stopped, a file gone unreadable) the refresh fails
// every tick. Its message never covers a decision's refusal, which must
// stay readable until the next key; it merges in the log instead of
// pushing that refusal out of it; and once a refresh succeeds, the line
// says the ledger answers again instead of keeping a stale error.
func TestOutageKeepsTheDecisionsResult(t *testing.T) {
	f := newFixture(t)
	m, err := New(Options{Store: f.s, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	m.Update(checkedMsg{err: down})
	if !strings.HasPrefix(m.lastErr, refreshPrefix) {
		t.Fatalf("a failed refresh is not said: %q", m.lastErr)
	}
	m.Update(actionMsg{action: "approve", keys: []string{"refund:x"}, errs: []error{errors.New("ledger unavailable; nothing was recorded")}})
	for range 1000 { // a hundred seconds of ticks
		m.Update(checkedMsg{err: down})
	}
	if !strings.Contains(m.lastErr, "1 refused: refund:x") {
		t.Errorf("the decision's refusal was covered by the refresh: %q", m.lastErr)
	}
	var log strings.Builder
	for _, e := range m.log.entries {
		log.WriteString(e.text + "\n")
	}
	if !strings.Contains(log.String(), "approve refused for refund:x") || len(m.log.entries) > 10 {
		t.Errorf("the log (%d entries) lost the refusal or did not merge the repeats:\n%s", len(m.log.entries), log.String())
	}
	m.log.SetSize(300, 40)
	if v := m.log.vp.View(); !strings.Contains(v, " (1001 times since ") {
		t.Errorf("the log does not count the repeated refresh failure:\n%s", v)
	}

	m.Update(press("j")) // the next key: the refusal was read
	m.Update(checkedMsg{err: down})
	if !strings.HasPrefix(m.lastErr, refreshPrefix) {
		t.Fatalf("a failed refresh is not said after the result was read: %q", m.lastErr)
	}
	m.Update(checkedMsg{})
	if m.lastErr != "" || !strings.Contains(m.notice, "the ledger answers again") {
		t.Errorf("after a good refresh: error %q, notice %q", m.lastErr, m.notice)
	}
}

// TestFailingRefreshBacksOff: while refreshes fail, the console waits
// longer between them (at most maxRefreshBackoff) instead of asking a
// stopped server every tick; once one succeeds it checks every tick again.
func TestFailingRefreshBacksOff(t *testing.T) {
	f := newFixture(t)
	m, err := New(Options{Store: f.s, Operator: "alice", Refresh: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	down := errors.New("connection refused")
	for range 5 {
		m.Update(checkedMsg{err: down})
	}
	m.Update(tickMsg{})
	if m.inflight {
		t.Fatal("a tick right after five failed refreshes asked the ledger again")
	}
	if wait := time.Until(m.retryAt); wait < time.Second || wait > maxRefreshBackoff {
		t.Errorf("after five failures the next try is in %v", wait)
	}
	m.retryAt = time.Now() // the backoff passed
	m.Update(tickMsg{})
	if !m.inflight {
		t.Fatal("no refresh once the backoff passed")
	}
	m.Update(checkedMsg{})
	m.Update(tickMsg{})
	if !m.inflight || !m.retryAt.IsZero() {
		t.Errorf("after a good refresh: inflight %v, retry at %v", m.inflight, m.retryAt)
	}
}
