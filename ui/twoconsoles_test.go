package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestTwoConsolesAnnounceEachOthersVotes (issue 42): alice and bob, each
// in a console on one ledger, under a two-approver rule. Bob's single
// vote on a key is announced in alice's console as his rejections are;
// when his vote completes the quorum alice's vote started, the decision
// is announced to her, and her own "waiting for one more" does not
// outlive it. Neither console announces its own votes to itself.
func TestTwoConsolesAnnounceEachOthersVotes(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2}, "root"); err != nil {
		t.Fatal(err)
	}
	f.guard("refund:1", "refund", "refund 10 EUR", "refund-bot")
	f.clock.Add(time.Minute) // due later: second in Pending
	f.guard("refund:2", "refund", "refund 20 EUR", "refund-bot")
	alice := f.console(80, 24, false, "alice")
	bob := f.run(Options{Store: f.other(), Operator: "bob"}, 80, 24)
	waitFor(t, alice, "refund 10 EUR")
	waitFor(t, bob, "refund 10 EUR")

	alice.Send(press("a"))
	waitFor(t, alice, "Approve 1 action?")
	alice.Send(press("enter"))
	waitFor(t, alice, "refund:1: 1 of 2 approvals (alice); waiting for one more")
	// Alice's vote reaches bob's console (on his cursor's key, the
	// detail pane says it).
	waitFor(t, bob, "1 of 2 approvals (alice)")

	// Bob's vote on the other key: news to alice, still pending.
	bob.Send(press("j"))
	waitFor(t, bob, "refund 20 EUR")
	bob.Send(press("a"))
	waitFor(t, bob, "Approve 1 action?")
	bob.Send(press("enter"))
	waitFor(t, bob, "refund:2: 1 of 2 approvals (bob); waiting for one more")
	waitFor(t, alice, "refund:2: an approval by bob at")

	// Bob completes the quorum alice's vote started.
	bob.Send(press("k"))
	waitFor(t, bob, "1 of 2 approvals (alice)")
	bob.Send(press("a"))
	waitFor(t, bob, "Approve 1 action?")
	bob.Send(press("enter"))
	waitFor(t, bob, "approve: 1 done")
	waitFor(t, alice, "refund:1 was approved by bob")

	m := finalModel(t, alice)
	view := m.View()
	if strings.Contains(m.notice, "waiting for one more") || strings.Contains(view, "refund:1: 1 of 2 approvals (alice); waiting") {
		t.Fatalf("alice's message about refund:1 outlived its decision: %q\n%s", m.notice, view)
	}
	for _, e := range m.log.entries {
		if strings.Contains(e.text, "by alice at") {
			t.Fatalf("alice's console announced her own vote: %q", e.text)
		}
	}
	requireGolden(t, view)
	final(t, bob)
}

// TestOwnVoteMessageGoesWhenTheKeyExpires: this console's "waiting for
// one more" about a key is taken down when the key leaves Pending with
// no decision (its approval expired), not left promising a quorum.
func TestOwnVoteMessageGoesWhenTheKeyExpires(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2}, "root"); err != nil {
		t.Fatal(err)
	}
	f.guard("refund:1", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund 10 EUR")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "refund:1: 1 of 2 approvals (alice); waiting for one more")
	f.clock.Add(2 * time.Hour) // the approval expired
	waitWithin(t, tm, "refund:1 left Pending", slowdown*3*time.Second)
	if m := finalModel(t, tm); strings.Contains(m.notice, "waiting for one more") {
		t.Fatalf("the message outlived the key's expiry: %q", m.notice)
	}
}
