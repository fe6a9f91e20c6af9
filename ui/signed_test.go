package ui

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// newSignedFixture is a ledger whose only operator is alice, opened with
// alice's key; its rules are signed by her.
func newSignedFixture(t *testing.T) *fixture {
	t.Chdir(t.TempDir())
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	alice, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: c.Now, Signers: []ssh.Signer{alice}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour}, ""); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, s: s, clock: c}
}

// TestSignedConsole: the console signs with the operator's key, says so
// in the status bar, and shows each decision's proof in the detail.
func TestSignedConsole(t *testing.T) {
	f := newSignedFixture(t)
	f.guard("refund:s-1", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(100, 30, false, "")
	waitFor(t, tm, "op alice signed")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "approve: 1 done")
	tm.Send(press("shift+tab")) // All actions, where the approved key is
	waitFor(t, tm, "signed by alice (SHA256:")
	final(t, tm)
	if a := f.guard("refund:s-1", "refund", "refund 10 EUR", "refund-bot"); a.Verdict != ledger.Permitted {
		t.Fatalf("signed approval in the console gave %s", a.Verdict)
	}
}

// TestConsoleWithoutKeyOnSignedLedger: a console with no registered key
// says decisions are refused, and an approval attempt shows the refusal
// and stores nothing.
func TestConsoleWithoutKeyOnSignedLedger(t *testing.T) {
	f := newSignedFixture(t)
	f.guard("refund:s-2", "refund", "x", "refund-bot")
	f.s = f.other() // the same file, opened with no operator key
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "op: no key")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "not permitted")
	final(t, tm)
	d, err := f.s.Status(ctx, "refund:s-2")
	if err != nil || d.State != ledger.StatePending || len(d.Votes) != 0 {
		t.Fatalf("a refused approval changed the key: %s %+v %v", d.State, d.Votes, err)
	}
	if !strings.Contains(d.Key, "s-2") {
		t.Fatal(d.Key)
	}
}
