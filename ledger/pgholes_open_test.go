package ledger

import (
	"context"
	"testing"
	"time"
)

// The attacks in this file succeeded when the attacking helper wrote
// them (the session of issue 25's schema 22): each test asserts what the
// ledger should do and skips, naming the hole, unless TOLLGATE_SHOW_HOLES
// is set (showHole, guardfn_holes_test.go).

// TestPostgresGuardHoleAgentHoldsAnotherKey: tollgate_lock_key is
// granted to tollgate_agent and takes, for any logical key its caller
// names, the key's exclusive transaction lock (1953459309,
// hashtext(key)), which every guard, report and decision of that key
// takes too. Schema 20 took tollgate_lock_head from the agent's role,
// not this. bot1 calls it on bot2's approved key in a transaction it
// leaves open, and from then on bot2's guard of its own approved request
// is never issued its permit: each attempt waits for the lock and fails
// ("ledger unavailable ... lock key ask:held: timeout", exit 75 from the
// CLI after 30 s), for as long as bot1's session lives; an operator's
// reject of the key fails the same way. No pg_advisory_* function is
// needed, so taking those from PUBLIC (the fix of the ledger-wide lock's
// hole) does not close it. Every key is visible to every role in
// action_index, so bot1 can hold them all (one call each). The function
// should lock only a key its caller's own transaction is about to write
// (or no agent should call it: the guard and report functions take the
// lock themselves), or the wait should name the holder so that an
// operator can end it.
func TestPostgresGuardHoleAgentHoldsAnotherKey(t *testing.T) {
	showHole(t, "an agent's role calls tollgate_lock_key('ask:held') on another agent's approved key in a transaction it leaves open, and that agent's guard never gets its permit (each attempt times out waiting for the key's lock, exit 75)")
	r := attackRoles(t)
	bot2, alice := openAt(t, r.bot2), openAt(t, r.alice)
	p := Payload{"ask", "t", "bot2's request"}
	if a, err := bot2.Guard(ctx, "ask:held", p, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	if _, err := alice.Approve(ctx, "ask:held", "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	tx, err := rawDB(t, r.bot1).DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT tollgate_lock_key('ask:held')"); err != nil {
		t.Logf("tollgate_lock_key as bot1: %v (refused: the hole is closed)", err)
	}
	gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	a, err := bot2.Guard(gctx, "ask:held", p, GuardOptions{Agent: "bot2"})
	if err != nil || a.Verdict != Permitted {
		t.Errorf("bot2's guard of its approved request while bot1 holds the key: %+v %v, want its permit", a.Verdict, err)
	}
}
