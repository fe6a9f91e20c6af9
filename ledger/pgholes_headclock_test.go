package ledger

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The attacks in this file succeeded when the attacking pass of the
// session of schema 24 wrote them, and are closed: the chain head held by
// an agent's open transaction (schema 25) and a policy window read by a
// slow clock (schemas 26 and 27). The other holes of that pass are in
// pgholes_fixed_test.go.

// TestPostgresAgentHoldingTheHeadIsNamed (a hole the attacking pass
// found, closed by schema 25): tollgate_seal, granted to tollgate_agent,
// locks the chain head (chain_head FOR UPDATE) whenever an event is
// pending, and keeps it until its caller's transaction ends. bot1 makes
// an event pending itself (a guard in a transaction it leaves open holds
// the head, so its second guard, from another session, commits its
// events pending), ends the first transaction, and calls
// tollgate_seal(NULL, 0) in a transaction it leaves open. Before schema
// 25 every operator decision then waited for the head with no bound of
// the database's and failed at its attempt's end naming no one ("read the
// chain head: timeout"), and while it waited it held the ledger-wide lock
// exclusively, so every other agent's guard of a new key waited behind
// it. Now the operator's wait for the head gives up after half a second,
// letting go of the ledger-wide lock, and names bot1's session; guards go
// on meanwhile. From schema 39 bot1's role takes no head at all, and the
// approval is decided.
func TestPostgresAgentHoldingTheHeadIsNamed(t *testing.T) {
	r := attackRoles(t)
	bot2, alice := openAt(t, r.bot2), openAt(t, r.alice)
	if a, err := bot2.Guard(ctx, "ask:decide-me", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	raw1 := rawDB(t, r.bot1)
	first, err := raw1.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := callFn(t, first, honestFn("run:head-1", Payload{"run", "t", "b"}, "bot1")); got.code != "" {
		first.Rollback()
		t.Fatalf("bot1's first guard: %+v", got)
	}
	var unsealed sql.NullInt64
	c := honestFn("run:head-2", Payload{"run", "t", "b"}, "bot1")
	// Another session of bot1's (a raw connection is one session).
	err = rawDB(t, r.bot1).DB.QueryRowContext(ctx, `SELECT o_unsealed FROM tollgate_guard($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		c.key, c.sha, c.canonical, c.kind, c.target, c.bodySHA, c.agent, c.ctxSHA, c.ctxText, c.lease, c.permit, c.retry, c.wait).Scan(&unsealed)
	first.Rollback()
	// From schema 39 an agent's role never holds the head: its events
	// are pending whatever, and its call answers no pending id, since
	// sealing is not its to do.
	if err != nil || unsealed.Valid {
		t.Fatalf("bot1's second guard beside its first's open transaction: unsealed %v, %v (want its events pending, no id)", unsealed, err)
	}
	hold, err := raw1.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, "SELECT tollgate_seal(NULL, 0)"); err != nil {
		t.Logf("tollgate_seal as bot1: %v (refused: the hole is closed)", err)
	}
	u, err := url.Parse(r.bot1)
	if err != nil {
		t.Fatal(err)
	}
	bot1Role := u.User.Username()
	var opErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		octx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, opErr = alice.Approve(octx, "ask:decide-me", "alice", "ok")
	}()
	time.Sleep(300 * time.Millisecond)
	gctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	a, gErr := bot2.Guard(gctx, "run:behind-operator", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"})
	<-done
	// Schema 25 named bot1 in the refusal; from schema 39 bot1 holds
	// nothing the approval waits for (TestPostgresAgentCannotStallDecisions).
	if opErr != nil {
		t.Errorf("alice's approval while bot1's tollgate_seal is open (as %s): %v, want it decided", bot1Role, opErr)
	}
	if gErr != nil || a.Verdict != Permitted {
		t.Errorf("bot2's guard of a new auto key while alice's approval waits: %+v %v, want its permit", a.Verdict, gErr)
	}
}

// TestPostgresAgentCannotPickWindowTime (a hole the attacking pass
// found, closed by schema 26): a fact's time is the client's, checked
// within 60 s of the database's clock, and the rules were decided at that
// time. The operators' rule for kind "window" is auto while now is
// before T and approval after it; 20 s after T, bot1 opens its store
// with a clock 21 s slow (Options.Now, or the host's clock set back) and
// guards a new key. Before schema 26 the evaluation was stored at T-1 s,
// auto, and bot1 was issued a permit the rules no longer gave; now the
// database decides at its own time too and refuses an evaluation made at
// the client's while the two differ (safe to repeat), and the client's
// retry, through the one-call guard that reads the database's clock, gets
// the database's decision. The test database keeps the 60 s bound.
func TestPostgresAgentCannotPickWindowTime(t *testing.T) {
	r := attackRoles(t)
	boundClock(t, r.owner)
	closed := time.Now().Add(-20 * time.Second).UTC()
	for _, rule := range []approvals.Rule{
		{Pattern: "window", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "window", Mode: approvals.Auto, Condition: `now < timestamp("` + closed.Format(time.RFC3339Nano) + `")`},
	} {
		if _, err := r.admin.SetPolicy(ctx, rule, "root"); err != nil {
			t.Fatal(err)
		}
	}
	honest := openAt(t, r.bot2)
	if a, err := honest.Guard(ctx, "window:honest", Payload{"window", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil || a.Verdict == Permitted {
		t.Fatalf("an honest guard after the window closed: %+v %v, want a pending request", a.Verdict, err)
	}
	slow, err := Open(ctx, r.bot1, Options{Now: func() time.Time { return time.Now().Add(-21 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	a, err := slow.Guard(ctx, "window:late", Payload{"window", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err == nil && a.Verdict == Permitted {
		t.Fatalf("bot1, its clock 21 s slow, was issued permit %s 20 s after the auto window closed", a.PermitID)
	}
	// Either refused, safe to repeat, saying why, or answered as the
	// database's clock decides (the one-call guard reads it): a pending
	// request under the approval rule.
	switch {
	case err != nil:
		// Schema 26's refusal, safe to repeat, or from schema 27 the
		// refusal of a request's or permit's time 2 s off.
		if !(errors.Is(err, ErrUnavailable) && strings.Contains(err.Error(), "the database's clock judges")) &&
			!(errors.Is(err, ErrNotPermitted) && strings.Contains(err.Error(), "from the database's clock")) {
			t.Fatalf("bot1's guard with its clock 21 s slow: %v, want a refusal that says the database's clock judges", err)
		}
	default:
		d, err := honest.Status(ctx, "window:late")
		if err != nil || d.State != StatePending || d.Policy != "approval" {
			t.Fatalf("bot1's guard with its clock 21 s slow answered %s; the key: %s under %s (%v), want pending under the approval rule", a.Verdict, d.State, d.Policy, err)
		}
	}
}
