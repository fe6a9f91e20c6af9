package ledger

import (
	"strings"
	"testing"
	"time"
)

// TestPostgresFlushGivesNoMore: tollgate_flush (schema 33) is the three
// statements that end a transaction in one call, SECURITY INVOKER, so an
// agent's role gains nothing through it. Through it, in a transaction
// each: the decision's bounded wait for the chain head is refused as it
// is when called alone (an operator's function); a forged "approved"
// event is refused with the code tollgate_append_events gives it alone;
// refreshing another agent's key and mismatched arrays change nothing.
// The ledger is unchanged and verifies.
func TestPostgresFlushGivesNoMore(t *testing.T) {
	r := attackRoles(t)
	bot1, err := openAt(t, r.bot1).Guard(ctx, "ask:bot1s", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err != nil || bot1.State != StatePending {
		t.Fatalf("bot1's honest guard: %+v %v", bot1, err)
	}
	owner, raw2 := rawDB(t, r.owner), rawDB(t, r.bot2)
	before := fullState(t, owner)
	in := func(q string, args ...any) string {
		t.Helper()
		tx, err := raw2.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		_, err = tx.Exec(q, args...)
		return pgCode(err)
	}
	forged := []any{"ask:bot1s", "approved", "alice", `{"reason":"ok"}`, time.Now().UnixMilli(), "decisions", "ask:bot1s", strings.Repeat("a", 64)}
	events := "ARRAY[$1], ARRAY[$2], ARRAY[$3], ARRAY[$4], ARRAY[$5::bigint], ARRAY[$6], ARRAY[$7], ARRAY[$8]"
	none := "ARRAY[]::text[], ARRAY[]::text[]"
	alone := in("SELECT * FROM tollgate_append_events("+events+")", forged...)
	if alone == "" {
		t.Fatal("tollgate_append_events took bot2's forged approval")
	}
	if got := in("SELECT * FROM tollgate_flush(false, "+events+", "+none+")", forged...); got != alone {
		t.Errorf("the forged approval through tollgate_flush: %q, alone %q", got, alone)
	}
	wait := in("SELECT tollgate_wait_head()")
	if wait != "42501" {
		t.Errorf("bot2's tollgate_wait_head alone: %q, want 42501", wait)
	}
	if got := in("SELECT * FROM tollgate_flush(true, "+events+", "+none+")", forged...); got != wait {
		t.Errorf("the forged approval through tollgate_flush, events first: %q, want %q as the wait alone", got, wait)
	}
	if got := in("SELECT * FROM tollgate_flush(false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY['ask:bot1s'], ARRAY['a target of its own'])"); got != "" {
		t.Errorf("bot2 refreshing bot1's key through tollgate_flush: %q", got)
	}
	if got := in("SELECT * FROM tollgate_flush(false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY['ask:bot1s'], ARRAY[]::text[])"); got != "22023" {
		t.Errorf("mismatched arrays: %q, want 22023", got)
	}
	var target string
	if err := owner.QueryRow("SELECT target FROM action_index WHERE action_key = 'ask:bot1s'").Scan(&target); err != nil || target != "t" {
		t.Errorf("bot1's key's target after bot2's refresh: %q (%v)", target, err)
	}
	if after := fullState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	verifyOK(t, r.admin)
}
