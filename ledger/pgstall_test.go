package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// decisionBound is how long an operator's decision may take while an
// agent's role holds every lock it can take (docs/postgres-roles.md,
// "No agent's role stalls a decision"): the decision waits for none of
// them, so it takes the time its own statements take. The bound leaves
// room for a loaded CI machine, and is far below the 30 s a stalled
// decision took before schema 39.
const decisionBound = 2 * time.Second

// sqlText is s as a dollar-quoted SQL literal (the tests' payloads hold
// no "$t$").
func sqlText(s string) string { return "$t$" + s + "$t$" }

// guardSQLText is a call of tollgate_guard for c, as text an agent types
// into psql.
func guardSQLText(c fnCall) string {
	return fmt.Sprintf("tollgate_guard(%s, %s, %s, %s, %s, %s, %s, '', '', %d, %s, false, 0)",
		sqlText(c.key.(string)), sqlText(c.sha.(string)), sqlText(c.canonical.(string)), sqlText(c.kind.(string)),
		sqlText(c.target.(string)), sqlText(c.bodySHA.(string)), sqlText(c.agent.(string)), c.lease.(int64), sqlText(c.permit.(string)))
}

// holdEverything starts psql as the agent's role at u, running one DO
// statement that takes every lock tollgate lets such a role take and
// then sleeps, the statement still active: two guards of new keys (an
// auto one and one that asks for approval: each key's lock, the
// ledger-wide gate shared, the rows they insert), a report under a
// permit it holds, tollgate_seal, the client path's tollgate_lock_key
// of another key of its own, and the advisory locks PUBLIC may take
// (docs/postgres-roles.md lists them as open without a superuser's
// REVOKE): the old ledger-wide number and another key's number, but not
// the decided key's, which is that open hold itself. It returns once the
// statement sleeps, and ends the session when the test ends.
func holdEverything(t *testing.T, r pgRoles, permitKey, permitID string) {
	t.Helper()
	u, err := url.Parse(r.bot1)
	if err != nil {
		t.Fatal(err)
	}
	role := u.User.Username()
	auto := honestFn("run:stall-held", Payload{"run", "t", "b"}, "bot1")
	ask := honestFn("ask:stall-held", Payload{"ask", "t", "b"}, "bot1")
	script := fmt.Sprintf(`DO $do$ BEGIN
PERFORM %s;
PERFORM %s;
PERFORM tollgate_report(%s, %s, 'succeeded', '', 1, '', 0);
PERFORM tollgate_seal(NULL, 0);
PERFORM tollgate_lock_key('run-stall-own');
PERFORM pg_advisory_lock(1953459308, 0);
PERFORM pg_advisory_lock(1953459309, hashtext('some-other-key'));
PERFORM pg_sleep(30);
END $do$;
`, guardSQLText(auto), guardSQLText(ask), sqlText(permitKey), sqlText(permitID))
	cmd := exec.Command(psqlPath(t), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-", r.bot1)
	cmd.Stdin = strings.NewReader(script)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	admin := rawDB(t, pgtest.Admin(t))
	t.Cleanup(func() {
		admin.DB.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.DB.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND state = 'active' AND wait_event = 'PgSleep'`, role).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bot1's statement never reached its sleep: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPostgresAgentCannotStallDecisions (issue 41): bot1, an agent's
// login role, runs through psql one statement that takes every lock its
// role can take and then sleeps (holdEverything). Up to development
// schema 38 its guard of a new key took the chain head whenever it was
// free and kept it to the statement's end, so alice's approval of bot2's
// request, on a key bot1 never touched, waited half a second per attempt
// and failed (75, naming bot1). No agent's role locks the head now: the
// owner takes it without waiting while bot1 sleeps, bot1's events are
// committed pending, and alice's approval commits within decisionBound,
// sealing the pending events of committed guards into the chain before
// its own. Another agent's guards go on meanwhile, and verify proves the
// ledger.
func TestPostgresAgentCannotStallDecisions(t *testing.T) {
	psqlPath(t)
	r := newPGRoles(t)
	bot1, bot2, alice := openAt(t, r.bot1), openAt(t, r.bot2), openAt(t, r.alice)
	if a, err := bot2.Guard(ctx, "ask:decide-me", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	mine, err := bot1.Guard(ctx, "run:stall-mine", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err != nil || mine.PermitID == "" {
		t.Fatalf("bot1's own permit: %+v %v", mine, err)
	}
	holdEverything(t, r, "run:stall-mine", mine.PermitID)

	// The chain head is free: the owner takes it without waiting.
	if _, err := rawDB(t, r.owner).DB.Exec("BEGIN; SELECT 1 FROM chain_head WHERE one = 1 FOR UPDATE NOWAIT; ROLLBACK"); err != nil {
		t.Errorf("the owner's NOWAIT lock of the chain head while bot1 sleeps: %v", err)
	}
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, aErr := alice.Approve(actx, "ask:decide-me", "alice", "ok")
	cancel()
	took := time.Since(start)
	if aErr != nil || took > decisionBound {
		t.Fatalf("alice's approval while bot1 holds every lock it can: %v after %s, want it committed within %s", aErr, took, decisionBound)
	}
	t.Logf("alice's approval committed in %s while bot1 slept holding its locks", took.Round(time.Millisecond))
	gctx, gcancel := context.WithTimeout(ctx, 3*time.Second)
	a, gErr := bot2.Guard(gctx, "run:beside-the-hold", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"})
	gcancel()
	if gErr != nil || a.Verdict != Permitted {
		t.Errorf("bot2's guard of a new auto key while bot1 sleeps: %+v %v", a.Verdict, gErr)
	}
	st, err := bot2.Guard(ctx, "ask:decide-me", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot2"})
	if err != nil || st.Verdict != Permitted {
		t.Errorf("bot2's guard after the approval: %+v %v, want its permit", st.Verdict, err)
	}
	// What bot1's hold wrote is not committed: its events are
	// nowhere; every committed agent's event is in the chain or
	// pending, and verify proves both.
	owner := rawDB(t, r.owner)
	var held int
	if err := owner.QueryRow(`SELECT (SELECT count(*) FROM events WHERE action_key LIKE '%stall-held')
		+ (SELECT count(*) FROM pending_events WHERE action_key LIKE '%stall-held')`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d events of bot1's uncommitted guards are visible", held)
	}
	verifyOK(t, r.admin)
}

// TestPostgresAgentEventsPendUntilAnOperatorWrites (issue 41): an
// agent's role never moves the chain head. Its guard's events (the
// one-call function and the client's key transaction alike) are
// committed pending even with the head free, its own tollgate_seal
// answers 0 and seals nothing, and the next writer that is not an
// agent's role (an operator's approval, or tollgate_seal called by an
// operator's role) seals them, in pending-id order, before its own. An
// agent's role in a REPEATABLE READ transaction is refused (0A000): with
// no head taken, nothing else would notice that its snapshot predates a
// change of rules.
func TestPostgresAgentEventsPendUntilAnOperatorWrites(t *testing.T) {
	r := newPGRoles(t)
	bot1, alice := openAt(t, r.bot1), openAt(t, r.alice)
	owner := rawDB(t, r.owner)
	if _, err := bot1.Guard(ctx, "run:one-call", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	// An attempt id takes the client's key transaction (tollgate_flush).
	if _, err := bot1.Guard(ctx, "run:client-path", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1", Attempt: "attempt-0000000001"}); err != nil {
		t.Fatal(err)
	}
	if _, err := bot1.Guard(ctx, "ask:seal-me", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	pending := pendingCount(t, owner)
	if pending < 9 {
		t.Fatalf("%d events pending after bot1's three guards with the head free, want each guard's events pending", pending)
	}
	if n := scalar(t, owner, "SELECT count(*)::text FROM events WHERE action_key LIKE 'run:%' OR action_key LIKE 'ask:%'"); n != "0" {
		t.Errorf("%s of bot1's events are in the chain: an agent's role moved the head", n)
	}
	var sealed int64
	if err := rawDB(t, r.bot1).DB.QueryRow("SELECT tollgate_seal(NULL, 0)").Scan(&sealed); err != nil || sealed != 0 {
		t.Errorf("bot1's tollgate_seal: sealed %d, %v; want 0, nothing locked", sealed, err)
	}
	tx, err := rawDB(t, r.bot1).DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	if got := callFn(t, tx, honestFn("run:repeatable", Payload{"run", "t", "b"}, "bot1")); got.code != "0A000" {
		t.Errorf("bot1's guard in REPEATABLE READ: %+v, want 0A000", got)
	}
	tx.Rollback()
	if _, err := alice.Approve(ctx, "ask:seal-me", "alice", ""); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, owner); n != 0 {
		t.Errorf("%d events pending after alice's approval, want it to seal them all", n)
	}
	keys := scalar(t, owner, `SELECT string_agg(DISTINCT action_key, ',') FROM (SELECT action_key FROM events
		WHERE action_key IN ('run:one-call', 'run:client-path', 'ask:seal-me') ORDER BY seq) e`)
	if keys != "ask:seal-me,run:client-path,run:one-call" {
		t.Errorf("keys in the chain after the approval: %s", keys)
	}
	last := scalar(t, owner, "SELECT action_key || ' ' || actor FROM events ORDER BY seq DESC LIMIT 1")
	if last != "ask:seal-me alice" {
		t.Errorf("the chain's last event is %s's, want alice's approval after the sealed ones", last)
	}
	// The next guard's events are pending again; an operator's role seals
	// them with tollgate_seal.
	if _, err := bot1.Guard(ctx, "run:after", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	if err := rawDB(t, r.alice).DB.QueryRow("SELECT tollgate_seal(NULL, 0)").Scan(&sealed); err != nil || sealed != 3 {
		t.Errorf("alice's tollgate_seal: sealed %d, %v; want the guard's 3", sealed, err)
	}
	verifyOK(t, r.admin)
}
