package ui

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
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
	return newSignedFixtureWith(t, newSigner(t), 1)
}

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	sg, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

// newSignedFixtureWith registers alice with her signer and sets the
// refund rule's quorum.
func newSignedFixtureWith(t *testing.T, alice ssh.Signer, quorum int) *fixture {
	t.Chdir(t.TempDir())
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: c.Now, Signers: []ssh.Signer{alice}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour, Approvers: quorum}, ""); err != nil {
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
	// The status bar's operator comes from the authority read, which can
	// land before the list: a press before the row shows has no row.
	waitFor(t, tm, "refund:s-1")
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

// TestConsoleWithoutKeyOnSignedLedger: on a signed ledger, a console
// with no registered key says so in the status bar and, at a, r, c or v,
// names the rule and how to load a key before any dialog opens: an
// operator who typed a reason and confirmed would learn only then that
// nothing could be recorded. Nothing is stored.
func TestConsoleWithoutKeyOnSignedLedger(t *testing.T) {
	f := newSignedFixture(t)
	f.guard("refund:s-2", "refund", "x", "refund-bot")
	f.s = f.other() // the same file, opened with no operator key
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "op: no key")
	waitFor(t, tm, "refund:s-2")
	tm.Send(press("a"))
	waitFor(t, tm, "decisions need a registered operator key: reopen with --key FILE")
	time.Sleep(2 * typeAhead) // read, not typed ahead: r is a key of its own
	tm.Send(press("r"))
	m := finalModel(t, tm)
	if seen := tm.seen.String(); strings.Contains(seen, "Approve 1 action?") || strings.Contains(seen, "Reject 1 action?") {
		t.Fatal("a decision dialog opened on a console that cannot sign")
	}
	if m.dialog != nil || !strings.Contains(m.lastErr, "--key FILE") || strings.Contains(m.lastErr, "dropped") {
		t.Fatalf("after r: dialog %v, message %q", m.dialog != nil, m.lastErr)
	}
	var log strings.Builder
	for _, e := range m.log.entries {
		log.WriteString(e.text + "\n")
	}
	if !strings.Contains(log.String(), "TOLLGATE_OPERATOR_KEY") {
		t.Fatalf("the log does not keep the ledger's whole rule:\n%s", log.String())
	}
	d, err := f.s.Status(ctx, "refund:s-2")
	if err != nil || d.State != ledger.StatePending || len(d.Votes) != 0 {
		t.Fatalf("a refused approval changed the key: %s %+v %v", d.State, d.Votes, err)
	}
}

// lockedAlice is alice's key as a passphrase-protected OpenSSH file.
func lockedAlice(t *testing.T, passphrase string) *opkeys.Key {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "operator_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := opkeys.Load(path)
	if err != nil || !k.Locked() {
		t.Fatalf("load: %v (locked %v)", err, k != nil && k.Locked())
	}
	return k
}

// TestConsoleAsksPassphrase: a passphrase-protected operator key is
// unlocked in the console's own prompt, which never draws what is typed
// (neither the text nor one mark per character); a wrong passphrase is
// named and asked again; a decision taken while the key is still locked
// asks first and then opens its dialog; the decision is signed.
func TestConsoleAsksPassphrase(t *testing.T) {
	const pass, wrong = "correct-horse-42", "wrongpass-17"
	key := lockedAlice(t, pass)
	setup, err := opkeys.Load(key.Path) // the same file, unlocked to set up
	if err != nil || setup.Unlock([]byte(pass)) != nil {
		t.Fatal(err)
	}
	f := newSignedFixtureWith(t, setup.Signer(nil), 1)
	f.guard("refund:p-1", "refund", "refund 10 EUR", "refund-bot")
	f.s, err = ledger.Open(ctx, "ledger.db", ledger.Options{Now: f.clock.Now, Signers: []ssh.Signer{key.Signer(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.s.Close() })
	f.locked = []LockedKey{key}
	tm := f.console(100, 30, false, "")
	waitFor(t, tm, "Operator key is passphrase-protected")
	tm.Type(wrong)
	tm.Send(press("enter"))
	waitFor(t, tm, "wrong passphrase")
	tm.Send(press("esc"))
	waitFor(t, tm, "operator key still locked")
	waitFor(t, tm, "refund:p-1")
	tm.Send(press("a"))
	waitFor(t, tm, "passphrase:")
	tm.Type(pass)
	tm.Send(press("enter"))
	waitFor(t, tm, "Approve 1 action?") // the decision asked for opens once unlocked
	tm.Send(press("enter"))
	waitFor(t, tm, "approve: 1 done")
	seen := tm.seen.String()
	final(t, tm)
	for _, secret := range []string{pass, wrong, "****", "••••"} {
		if strings.Contains(seen, secret) {
			t.Fatalf("the console drew %q while a passphrase was typed", secret)
		}
	}
	d, err := f.s.Status(ctx, "refund:p-1")
	if err != nil || len(d.Votes) != 1 || d.Votes[0].Proof.Status != proofSigned || d.Votes[0].Operator != "alice" {
		t.Fatalf("the approval is not signed by alice: %+v %v", d.Votes, err)
	}
	if a := f.guard("refund:p-1", "refund", "refund 10 EUR", "refund-bot"); a.Verdict != ledger.Permitted {
		t.Fatalf("the signed approval gave %s", a.Verdict)
	}
}

// TestConsoleShowsQuorum: under a rule needing two approvers, one
// approval leaves the key pending and the detail says "1 of 2 approvals"
// and who gave it; the same operator again is refused; a second
// operator's approval grants it.
func TestConsoleShowsQuorum(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := newSignedFixtureWith(t, alice, 2)
	if _, err := f.s.AddOperator(ctx, "bob", opkeys.Line(bob.PublicKey())); err != nil {
		t.Fatal(err)
	}
	f.guard("refund:q-1", "refund", "refund 99 EUR", "refund-bot")
	tm := f.console(100, 30, false, "")
	waitFor(t, tm, "0 of 2 approvals")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "1 of 2 approvals (alice)")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "1 refused")
	final(t, tm)
	if a := f.guard("refund:q-1", "refund", "refund 99 EUR", "refund-bot"); a.Verdict != ledger.RetryLater {
		t.Fatalf("one approval of two gave %s", a.Verdict)
	}
	sb, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: f.clock.Now, Signers: []ssh.Signer{bob}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, err := sb.Approve(ctx, "refund:q-1", "", "second"); err != nil {
		t.Fatal(err)
	}
	if a := f.guard("refund:q-1", "refund", "refund 99 EUR", "refund-bot"); a.Verdict != ledger.Permitted {
		t.Fatalf("two approvals gave %s", a.Verdict)
	}
}
