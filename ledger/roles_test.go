package ledger

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

// TestPostgresRolesRefuseWhatTheyMayNotDo connects as members of the two
// roles that 'tollgate migrate' creates (SPEC 8), over TCP with password
// authentication as agents on other hosts would, and shows that the
// database itself, not tollgate, refuses the agent a decision, a
// reconciliation and a policy change, and refuses both roles UPDATE,
// DELETE and TRUNCATE on every fact table; the operator's decision and
// reconciliation go through.
func TestPostgresRolesRefuseWhatTheyMayNotDo(t *testing.T) {
	owner := pgtest.DB(t)
	clk := newClock()
	open := func(u string) *Store {
		t.Helper()
		s, err := Open(ctx, u, Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	admin := open(owner) // migrates: the schema and the roles
	if _, err := admin.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	agentURL := pgtest.Role(t, owner, "bot", "tollgate_agent")
	operatorURL := pgtest.Role(t, owner, "alice", "tollgate_operator")
	agent, operator := open(agentURL), open(operatorURL)

	if a, err := agent.Guard(ctx, "k:ask", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil || a.State != StatePending {
		t.Fatalf("the agent's guard: %+v %v", a, err)
	}
	if a, err := agent.Guard(ctx, "k:run", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil || a.PermitID == "" {
		t.Fatalf("the agent's auto guard: %+v %v", a, err)
	}
	clk.Add(DefaultLease + time.Minute) // k:run is now uncertain

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "the database refused this role") {
			t.Fatalf("%s as the agent's role: %v, want the database's refusal (ErrNotPermitted)", what, err)
		}
	}
	_, err := agent.Approve(ctx, "k:ask", "mallory", "")
	refused("approve", err)
	_, err = agent.Reconcile(ctx, "k:run", ResultExecuted, "mallory", "done")
	refused("reconcile", err)
	_, err = agent.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "mallory")
	refused("set policy", err)

	if d, err := operator.Approve(ctx, "k:ask", "alice", ""); err != nil || d.State != StateApproved {
		t.Fatalf("the operator's approval: %+v %v", d, err)
	}
	if _, err := operator.Reconcile(ctx, "k:run", ResultExecuted, "alice", "checked the bank"); err != nil {
		t.Fatalf("the operator's reconciliation: %v", err)
	}
	if a, err := agent.Guard(ctx, "k:ask", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil || a.PermitID == "" {
		t.Fatalf("the approved key's permit: %+v %v", a, err)
	}
	// The decision names the database role that wrote it, beside the
	// operator's name.
	var role string
	if err := rawDB(t, owner).QueryRow("SELECT db_role FROM decisions WHERE action_key = 'k:ask'").Scan(&role); err != nil || !strings.HasSuffix(role, "_alice") {
		t.Fatalf("the decision's database role = %q, %v", role, err)
	}

	for _, who := range []struct{ name, url string }{{"agent", agentURL}, {"operator", operatorURL}} {
		db := rawDB(t, who.url)
		for _, ft := range append(factTables, factTable{name: "intents", cols: "action_key"}, factTable{name: "events", cols: "seq"}) {
			col := strings.SplitN(ft.cols, ",", 2)[0]
			for _, q := range []string{"UPDATE " + ft.name + " SET " + col + " = " + col, "DELETE FROM " + ft.name, "TRUNCATE " + ft.name + " CASCADE"} {
				_, err := db.Exec(q)
				if err == nil || !errors.Is(operator.eng.MapError(err), ErrNotPermitted) {
					t.Errorf("%s: %s: %v, want permission denied", who.name, q, err)
				}
			}
		}
	}
	// The chain and the projection are written only through the schema's
	// functions: each direct write an agent tried before (the head set to
	// the largest bigint, another agent's key marked settled, an event
	// slipped in out of turn) is refused, and nothing changes.
	before, err := admin.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stageBefore string
	rawDB(t, owner).QueryRow("SELECT stage FROM action_index WHERE action_key = 'k:ask'").Scan(&stageBefore)
	for _, who := range []struct{ name, url string }{{"agent", agentURL}, {"operator", operatorURL}} {
		db := rawDB(t, who.url)
		for _, q := range []string{
			"UPDATE chain_head SET seq = 9223372036854775807",
			"UPDATE action_index SET stage = 'succeeded' WHERE action_key = 'k:ask'",
			"INSERT INTO action_index(action_key, logical_key, payload_sha256) VALUES ('k:x', 'k:x', '" + strings.Repeat("a", 64) + "')",
			"INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash) VALUES (" + strconv.FormatInt(before.Seq+1, 10) +
				", 'k:ask', 'approved', 'mallory', '{}', 1, '" + before.Hash + "', '" + strings.Repeat("b", 64) + "')",
			"SELECT * FROM chain_head FOR UPDATE",
		} {
			if _, err := db.Exec(q); err == nil || !errors.Is(operator.eng.MapError(err), ErrNotPermitted) {
				t.Errorf("%s: %s: %v, want permission denied", who.name, q, err)
			}
		}
		// What the functions do is the truth of the facts: refreshing
		// another key's row cannot change its stage.
		if _, err := db.Exec("SELECT tollgate_refresh_index('k:ask', 'a target of its own')"); err != nil {
			t.Errorf("%s: refresh: %v", who.name, err)
		}
	}
	after, err := admin.Head(ctx)
	var stageAfter, target string
	rawDB(t, owner).QueryRow("SELECT stage, target FROM action_index WHERE action_key = 'k:ask'").Scan(&stageAfter, &target)
	if err != nil || after != before || stageAfter != stageBefore || target != "t" {
		t.Fatalf("after the refused writes: head %+v -> %+v (%v), k:ask %s -> %s, target %q", before, after, err, stageBefore, stageAfter, target)
	}
	rep, err := admin.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestPostgresConnectionKilledMidTransaction terminates the store's
// server sessions (pg_terminate_backend) over and over while it guards and
// reports: every call either completes or is retried to completion,
// never half done; each key has one intent, one permit and one report,
// and verify finds the chain whole.
func TestPostgresConnectionKilledMidTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the full run terminates sessions for 10 s")
	}
	u := pgtest.DB(t)
	s, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	admin := rawDB(t, pgtest.Admin(t))
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(pu.Path, "/")
	stop := make(chan struct{})
	killed := make(chan int)
	go func() {
		n := 0
		defer func() { killed <- n }()
		for {
			select {
			case <-stop:
				return
			// Every 50 ms, and only sessions at least 250 ms old: a new
			// session's first call (its connection's set-up, the server
			// compiling the functions it calls) can take longer than the
			// interval, and killing every new session before it finishes
			// starves every retry, a livelock that proves nothing about
			// what a kill leaves behind (it hung this test for 20 minutes).
			case <-time.After(50 * time.Millisecond):
			}
			var k int
			_ = admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = ? AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
				AND backend_start < now() - interval '250 milliseconds'`, dbName).Scan(&k)
			n += k
		}
	}()
	const keys = 150
	reported := 0
	for i := 0; i < keys; i++ {
		key := "kill:" + strconv.Itoa(i)
		a, err := s.Guard(ctx, key, Payload{"run", "t", strconv.Itoa(i)}, GuardOptions{Agent: "bot"})
		if err != nil {
			t.Fatalf("%s: guard: %v", key, err)
		}
		if a.Verdict != Permitted {
			t.Fatalf("%s: %+v", key, a)
		}
		if a.PermitID != "" {
			if _, err := s.Report(ctx, key, a.PermitID, Succeeded, ReportOptions{}); err != nil {
				t.Fatalf("%s: report: %v", key, err)
			}
			reported++
		}
	}
	close(stop)
	n := <-killed
	if n == 0 {
		t.Fatal("no session was terminated: the test proved nothing")
	}
	var intents, permits, reports int
	rawDB(t, u).QueryRow("SELECT (SELECT count(*) FROM intents), (SELECT count(*) FROM permits), (SELECT count(*) FROM reports WHERE kind = 'accepted')").Scan(&intents, &permits, &reports)
	// A permit whose answer was lost with its session is replayed to the
	// retry without its id, so the agent cannot report it: the key is then
	// uncertain for an operator, as SPEC 4 says, never re-executed.
	if intents != keys || permits != keys || reports != reported {
		t.Fatalf("%d intents, %d permits, %d reports (%d sent) after %d terminated sessions; want %d each", intents, permits, reports, reported, n, keys)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify after %d terminated sessions: %+v %v", n, rep, err)
	}
	t.Logf("%d sessions terminated; %d keys each with one intent and one permit, %d reports", n, keys, reports)
}

// TestPostgresSchemaVersions: a ledger with a newer schema than this build
// is refused by name, for reading and writing alike; a database holding
// another application's tables is refused and left as it is; a reading
// open never creates a ledger; a role that may not migrate says who may.
func TestPostgresSchemaVersions(t *testing.T) {
	u := pgtest.DB(t)
	if _, err := Open(ctx, u, Options{ReadOnly: true}); !errors.Is(err, ErrNoLedger) {
		t.Fatalf("reading an empty database: %v, want ErrNoLedger", err)
	}
	s, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, u)
	newer := postgres.SchemaVersion() + 1
	if _, err := db.Exec("INSERT INTO tollgate_schema(version) VALUES (?)", newer); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		if _, err := Open(ctx, u, Options{ReadOnly: ro}); !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), fmt.Sprint(newer)) {
			t.Fatalf("read-only %v on schema %d: %v, want ErrNewerSchema", ro, newer, err)
		}
	}

	other := pgtest.DB(t)
	if _, err := rawDB(t, other).Exec("CREATE TABLE customers (id int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, other, Options{}); !errors.Is(err, ErrNotLedger) {
		t.Fatalf("another application's database: %v, want ErrNotLedger", err)
	}
	var n int
	if err := rawDB(t, other).QueryRow("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("another application's database now has %d tables (%v)", n, err)
	}

	empty := pgtest.DB(t)
	agent := pgtest.Role(t, empty, "bot", "tollgate_agent")
	if _, err := Open(ctx, agent, Options{}); !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "schema's owner") {
		t.Fatalf("an agent role opening an empty database: %v", err)
	}
}
