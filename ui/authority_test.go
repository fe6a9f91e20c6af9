package ui

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// TestAuthorityReReadMarksVotesNotHonoured: an open console re-reads who
// may decide; when the operator whose vote approved a key is removed,
// the status line says so and the detail no longer shows the approval as
// done, since guard no longer counts it.
func TestAuthorityReReadMarksVotesNotHonoured(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := newSignedFixtureWith(t, alice, 1)
	if _, err := f.s.AddOperator(ctx, "bob", opkeys.Line(bob.PublicKey())); err != nil {
		t.Fatal(err)
	}
	f.guard("refund:au-1", "refund", "refund 5 EUR", "refund-bot")
	if _, err := openAs(t, f, bob).Approve(ctx, "refund:au-1", "", "ok"); err != nil {
		t.Fatal(err)
	}
	tm := f.console(120, 40, true, "")
	tm.Send(press("5"))
	waitFor(t, tm, "signed by bob (SHA256:")
	if _, err := f.s.RemoveOperator(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "authority changed: operator bob (SHA256:")
	waitFor(t, tm, "NOT HONOURED: its signer's key is no longer registered")
	m := finalModel(t, tm)
	v := m.View()
	if !strings.Contains(v, "NOT HONOURED: the approvals on file do not reach the quorum") {
		t.Fatalf("the detail shows the approval as done:\n%s", v)
	}
	a, err := f.s.Guard(ctx, "refund:au-1", ledger.Payload{Kind: "refund", Target: "acct-7", Body: "refund 5 EUR"}, ledger.GuardOptions{Agent: "refund-bot"})
	if err == nil || a.Verdict == ledger.Permitted {
		t.Fatalf("guard permits on the removed operator's vote (%s, %v): the console's warning is moot", a.Verdict, err)
	}
}
