package cli_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// holdHeadLock opens a transaction on db that locks the chain head's row,
// as an operator would who ran `BEGIN; SELECT ... FOR UPDATE` in psql and
// went to lunch, and the locks of keys: every write of the ledger that
// appends at the head waits for it, and a new key's guard, which commits
// its events pending under its key's lock alone (schema 16), waits for
// its key's, as does a report in one call (schema 19). The returned
// function ends the transaction.
func holdHeadLock(t *testing.T, db string, keys ...string) func() {
	t.Helper()
	// Unprepared statements: behind a pooler in transaction mode two
	// holds in one test would prepare the same statement in one server
	// session.
	conn, err := sql.Open("pgx", db+"&default_query_exec_mode=exec")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT 1 FROM chain_head FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := tx.Exec("SELECT tollgate_lock_key($1)", k); err != nil {
			t.Fatal(err)
		}
	}
	done := false
	release := func() {
		if !done {
			done = true
			tx.Rollback()
			conn.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// agentLedger migrates the empty database at owner with an auto rule
// for each of kinds and returns the URL of a new agent role, name, that
// role (pgtest.Role, or a Cluster's) makes.
func agentLedger(t *testing.T, owner string, role func(testing.TB, string, string, string) string, name string, kinds ...string) string {
	t.Helper()
	homes.Store(owner, t.TempDir())
	want(t, run(t, owner, "", "migrate"), cli.ExitOK)
	for _, k := range kinds {
		want(t, run(t, owner, "", "policy", "set", k, "--mode", "auto", "--operator", "root"), cli.ExitOK)
	}
	agent := role(t, owner, name, "tollgate_agent")
	homes.Store(agent, homeOf(owner))
	return agent
}

// stallCommits makes every COMMIT on c wait, flushed, for a synchronous
// standby that does not exist (a site whose only standby died) while
// call runs; then it lifts the requirement and waits until the sessions
// left waiting have committed.
func stallCommits(t *testing.T, c *pgtest.Cluster, call func()) {
	t.Helper()
	c.Exec(t, "ALTER SYSTEM SET synchronous_standby_names = 'ghost'", "SELECT pg_reload_conf()")
	time.Sleep(300 * time.Millisecond) // every backend has read it
	call()
	c.Exec(t, "ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()")
	admin, err := sql.Open("pgx", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for n := 1; n > 0; time.Sleep(50 * time.Millisecond) {
		if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPostgresLockWaitIsBoundedPerAttempt: a write whose attempt waits
// for a row lock another session holds is abandoned after
// --attempt-timeout (or $TOLLGATE_ATTEMPT_TIMEOUT) and made again; while
// the lock is held past --retry-for, guard and report exit 75 with
// "safe_to_repeat" within the budget (not a driver's error after it), and
// nothing was recorded; once the lock is let go mid-call, the call goes
// through on a later attempt.
func TestPostgresLockWaitIsBoundedPerAttempt(t *testing.T) {
	if !onPostgres {
		t.Skip("runs with TOLLGATE_TEST_BACKEND=postgres, direct and through pgbouncer")
	}
	owner := pgtest.DB(t)
	agent := agentLedger(t, owner, pgtest.Role, "bot", "job")
	g := run(t, agent, "", "guard", "job:held-1", "--json", "--agent", "bot", "--kind", "job", "--target", "t", "--body", "b")
	want(t, g, cli.ExitOK)
	permit := g.json(t)["permit_id"].(string)

	env := []string{"TOLLGATE_RETRY_FOR=4s"}
	release := holdHeadLock(t, owner, "job:held-2", "job:held-1")
	for _, tc := range []struct {
		what string
		env  []string
		args []string
	}{
		{"guard, from the environment", append(env, "TOLLGATE_ATTEMPT_TIMEOUT=1s"),
			[]string{"guard", "job:held-2", "--json", "--agent", "bot", "--kind", "job", "--target", "t", "--body", "b"}},
		{"report, from the flag", env,
			[]string{"report", "job:held-1", "--json", "--permit", permit, "--outcome", "succeeded", "--attempt-timeout", "1s"}},
	} {
		t0 := time.Now()
		r := runEnv(t, agent, "", tc.env, tc.args...)
		took := time.Since(t0)
		if r.code != cli.ExitTempFail || r.json(t)["safe_to_repeat"] != true {
			t.Fatalf("%s while the head is locked: exit %d: %s", tc.what, r.code, r.stderr)
		}
		// Schema 29 bounds a wait for a key's lock by half a second,
		// within the attempt's, and names the holder instead.
		if !strings.Contains(r.stderr, "abandoned") && !strings.Contains(r.stderr, "is held by") {
			t.Errorf("%s: the refusal does not say the attempt was abandoned or who holds its lock: %s", tc.what, r.stderr)
		}
		// The budget, one attempt, and a process's start on shared cores.
		if took > 8*time.Second {
			t.Errorf("%s answered after %s: --retry-for is 4s", tc.what, took)
		}
		t.Logf("%s: exit %d after %s: %s", tc.what, r.code, took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
	}
	release()
	// Nothing was recorded by the abandoned attempts.
	want(t, run(t, agent, "", "status", "job:held-2"), cli.ExitNotFound)
	if s := run(t, agent, "", "status", "job:held-1", "--json").json(t); s["state"] != "executing" {
		t.Fatalf("job:held-1 after its abandoned report: %v", s)
	}

	// The lock let go while the call retries: a later attempt gets it.
	release = holdHeadLock(t, owner, "job:held-1")
	go func() {
		time.Sleep(2500 * time.Millisecond)
		release()
	}()
	t0 := time.Now()
	r := runEnv(t, agent, "", []string{"TOLLGATE_RETRY_FOR=20s", "TOLLGATE_ATTEMPT_TIMEOUT=1s"},
		"report", "job:held-1", "--json", "--permit", permit, "--outcome", "succeeded")
	want(t, r, cli.ExitOK)
	if took := time.Since(t0); took < 2*time.Second {
		t.Fatalf("the report went through in %s, while the head was locked", took)
	}
	want(t, run(t, agent, "", "verify"), cli.ExitOK)
}

// TestPostgresHungCommitIsBoundedPerAttempt: a COMMIT that gets no answer
// (it waits for a synchronous standby that is gone, as on a site whose
// only standby died) is abandoned after --attempt-timeout; its retries
// wait behind it (it still holds the chain head), so when --retry-for
// ends the guard and the report (each hung alone) exit 74, "committed": "unknown", in
// bounded time, not 75 (the permit was recorded) nor a hang. Once the
// standby requirement is lifted, the report repeated answers as stored
// and the guard's key, whose permit was recorded and never delivered, is
// executing: never permitted twice.
func TestPostgresHungCommitIsBoundedPerAttempt(t *testing.T) {
	if testing.Short() || !onPostgres || !pgtest.Direct() {
		t.Skip("on a PostgreSQL cluster of its own: runs once, in the direct TOLLGATE_TEST_BACKEND=postgres run, not under -short")
	}
	c := pgtest.NewCluster(t)
	owner := c.DB(t)
	agent := agentLedger(t, owner, c.Role, "bot", "job")
	guard := func(key string) result {
		return runEnv(t, agent, "", []string{"TOLLGATE_RETRY_FOR=3s", "TOLLGATE_ATTEMPT_TIMEOUT=1s"},
			"guard", key, "--json", "--agent", "bot", "--kind", "job", "--target", "t", "--body", "b")
	}
	g := guard("job:ok")
	want(t, g, cli.ExitOK)
	permit := g.json(t)["permit_id"].(string)
	report := func() result {
		return runEnv(t, agent, "", []string{"TOLLGATE_RETRY_FOR=3s"},
			"report", "job:ok", "--json", "--permit", permit, "--outcome", "succeeded", "--attempt-timeout", "1s")
	}

	for _, tc := range []struct {
		what string
		call func() result
	}{{"guard", func() result { return guard("job:hung") }}, {"report", report}} {
		var r result
		var took time.Duration
		stallCommits(t, c, func() {
			t0 := time.Now()
			r = tc.call()
			took = time.Since(t0)
		})
		if r.code != cli.ExitCommitUnknown || r.json(t)["committed"] != "unknown" {
			t.Fatalf("%s whose COMMIT never answers: exit %d: %s", tc.what, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "abandoned") {
			t.Errorf("%s: the answer does not say the attempt was abandoned: %s", tc.what, r.stderr)
		}
		if took > 8*time.Second {
			t.Errorf("%s answered after %s: --retry-for is 3s", tc.what, took)
		}
		t.Logf("%s: exit %d after %s: %s", tc.what, r.code, took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
	}
	r := report()
	if r.code != cli.ExitOK || r.json(t)["state"] != "succeeded" || r.json(t)["replayed"] != true {
		t.Fatalf("the report repeated: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	r = guard("job:hung")
	if r.code != cli.ExitRetry || r.json(t)["state"] != "executing" {
		t.Fatalf("guard after its abandoned commit: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	want(t, run(t, owner, "", "verify"), cli.ExitOK)
}
