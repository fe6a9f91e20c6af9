package ledger

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// loseCommitAnswer runs call on a store whose sessions carry
// application_name app, and makes its COMMIT's answer get lost after the
// commit is durable: the cluster waits for a synchronous standby that
// does not exist ("ghost"), so COMMIT, once flushed locally, hangs in
// SyncRep; the test then terminates that session (the transaction stays
// committed, the client's connection drops before any answer) and lets
// commits through again. What call returns is what a caller whose commit
// answer was lost gets from the store's own retry.
func loseCommitAnswer(t *testing.T, c *pgtest.Cluster, app string, call func() error) error {
	t.Helper()
	c.Exec(t, "ALTER SYSTEM SET synchronous_standby_names = 'ghost'", "SELECT pg_reload_conf()")
	time.Sleep(300 * time.Millisecond) // every backend has read it
	errc := make(chan error, 1)
	go func() { errc <- call() }()
	db, err := sql.Open("pgx", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pid int
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := db.QueryRow("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'SyncRep'", app).Scan(&pid)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session of %s waits for its commit to replicate: %v", app, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Cut first, then let commits through: the other order would deliver
	// the answer.
	var ok bool
	if err := db.QueryRow("SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate %d: %v %v", pid, ok, err)
	}
	// The retry's own COMMIT waits for the standby too, even when it
	// writes nothing new (it locks the chain head, so it has a
	// transaction id): the caller is answered from what it found only
	// once that, and everything before it, is replicated. Were it
	// answered at once, a failover could lose the fact it was told of.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var retry int
		err := db.QueryRow("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'SyncRep' AND pid <> $2", app, pid).Scan(&retry)
		if err == nil {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("the retry answered (%v) without waiting for its commit to replicate", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the retry's commit does not wait for the standby: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Exec(t, "ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()")
	select {
	case err := <-errc:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return 30 s after its commit's answer was lost")
		return nil
	}
}

// TestPostgresCommitAnswerLost: a write whose COMMIT became durable but
// whose answer the client never got (the session was terminated while
// the commit waited) is retried by the store only by asking the ledger
// again in a new transaction, and the caller's answer follows what is
// stored: guard's permit is issued once, and the caller that was issued
// it is told so (its id is one only that call knew); a report is stored
// once and answered as stored; an operator's approval is stored once and
// the operator is told it is decided, by them.
func TestPostgresCommitAnswerLost(t *testing.T) {
	// A cluster of its own, so once: in the direct PostgreSQL run.
	if testing.Short() || !onPostgres || !pgtest.Direct() {
		t.Skip("on a PostgreSQL cluster of its own: runs once, in the direct TOLLGATE_TEST_BACKEND=postgres run, not under -short")
	}
	c := pgtest.NewCluster(t)
	owner := c.DB(t)
	const app = "lost-answer"
	u, _ := url.Parse(owner)
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, u.String(), Options{RetryFor: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "job", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) int {
		var n int
		if err := s.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	var a Answer
	err = loseCommitAnswer(t, c, app, func() (err error) {
		a, err = s.Guard(ctx, "job:1", Payload{"job", "acct", "1"}, GuardOptions{Agent: "bot", Lease: time.Minute})
		return err
	})
	t.Logf("guard whose commit answer was lost: %+v %v", a, err)
	if n := count("SELECT count(*) FROM permits WHERE action_key = 'job:1'"); n != 1 {
		t.Fatalf("%d permits for job:1", n)
	}
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.Status(ctx, "job:1")
	if err != nil {
		t.Fatal(err)
	}
	// Told to wait, the caller would never learn the permit's id: the
	// action would wait out the lease and turn uncertain unexecuted.
	if a.Verdict != Permitted || a.PermitID != stored.PermitID || a.Replayed {
		t.Fatalf("guard answered %+v; the ledger's permit is %s", a, stored.PermitID)
	}
	permit := a.PermitID

	var rep ReportAnswer
	err = loseCommitAnswer(t, c, app, func() (err error) {
		rep, err = s.Report(ctx, "job:1", permit, Succeeded, ReportOptions{})
		return err
	})
	t.Logf("report whose commit answer was lost: %+v %v", rep, err)
	if err != nil || rep.State != StateSucceeded {
		t.Fatalf("report answered %+v, %v", rep, err)
	}
	if n := count("SELECT count(*) FROM reports WHERE action_key = 'job:1'"); n != 1 {
		t.Fatalf("%d reports for job:1", n)
	}

	if _, err := s.Guard(ctx, "refund:1", Payload{"refund", "acct", "1"}, GuardOptions{Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	var d Decision
	err = loseCommitAnswer(t, c, app, func() (err error) {
		d, err = s.Approve(ctx, "refund:1", "alice", "")
		return err
	})
	t.Logf("approval whose commit answer was lost: %+v %v", d, err)
	if n := count("SELECT count(*) FROM votes WHERE action_key = 'refund:1'"); n != 1 {
		t.Fatalf("%d votes for refund:1", n)
	}
	// Not "already decided" (exit 4): the stored decision is this call's.
	if err != nil || d.State != StateApproved || d.Operator != "alice" || d.Approvals != 1 {
		t.Fatalf("approve answered %+v, %v", d, err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestPostgresMisconfigurationIsNotAnOutage: a login the server refuses
// (a wrong password) and a database that does not exist are told apart
// from an unreachable server: not ErrUnavailable ("safe to repeat",
// which the CLI retries for its whole --retry-for budget before exiting
// 75) but ErrNotPermitted (exit 77) and ErrNoLedger (exit 7), at once.
// A server that is not there at all is still ErrUnavailable.
func TestPostgresMisconfigurationIsNotAnOutage(t *testing.T) {
	if !onPostgres {
		t.Skip("a PostgreSQL test: runs with TOLLGATE_TEST_BACKEND=postgres")
	}
	if !pgtest.Direct() {
		// Through a pooler the refusal is the pooler's: pgbouncer answers a
		// wrong password and a missing database with a protocol error
		// (08P01) of its own wording, and retries the server's login
		// itself; docs/postgresql-failover.md says what a caller then sees.
		t.Skip("the server's own refusals: runs in the direct PostgreSQL run")
	}
	owner := pgtest.DB(t)
	u := mustParseURL(t, owner)
	wrong := *u
	wrong.User = url.UserPassword(u.User.Username(), "not-the-password")
	missing := *u
	missing.Path = "/no_such_database"
	down := *u
	down.Host = "127.0.0.1:1"
	for _, c := range []struct {
		name string
		url  string
		want error
	}{
		{"wrong password", wrong.String(), ErrNotPermitted},
		{"no such database", missing.String(), ErrNoLedger},
		{"no server", down.String(), ErrUnavailable},
	} {
		for _, ro := range []bool{false, true} {
			s, err := Open(ctx, c.url, Options{ReadOnly: ro})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, c.want) || (c.want != ErrUnavailable && errors.Is(err, ErrUnavailable)) {
				t.Errorf("%s (read-only %v): %v, want %v", c.name, ro, err, c.want)
			}
		}
	}
}
