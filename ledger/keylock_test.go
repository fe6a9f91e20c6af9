package ledger

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// TestPostgresKeyTransactions: on PostgreSQL a transaction that moves one
// action locks its key, not the ledger (schema 13). While another session
// holds key run:a's locks in an open transaction, a guard of run:b
// completes, a guard of run:a (or of the same logical key under an
// epoch) waits, and so does a writer of ledger-wide facts (a rule), which
// must not interleave with a key transaction under way; once the session
// commits, both go through. A regression to one lock for every writer
// makes the guard of run:b wait, and the test fail.
func TestPostgresKeyTransactions(t *testing.T) {
	if !onPostgres {
		t.Skip("PostgreSQL only (TOLLGATE_TEST_BACKEND=postgres)")
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
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.Exec("SELECT tollgate_lock_key('run:a')"); err != nil {
		t.Fatal(err)
	}
	guard := func(key string, wait time.Duration) error {
		c, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		_, err := s.Guard(c, key, Payload{"run", "acct", "1"}, GuardOptions{Agent: "bot"})
		return err
	}
	if err := guard("run:b", 20*time.Second); err != nil {
		t.Fatalf("a guard of run:b waited for run:a's transaction: %v", err)
	}
	// Waiting is what ends at the deadline: the call fails, and took it.
	waits := func(what string, call func(context.Context) error) {
		const wait = 500 * time.Millisecond
		c, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		start := time.Now()
		if err := call(c); err == nil || time.Since(start) < wait*9/10 {
			t.Fatalf("%s while run:a's transaction is open: %v after %v, want it to wait", what, err, time.Since(start))
		}
	}
	for _, key := range []string{"run:a", "hsr1:00000000-0000-4000-8000-000000000001:run:a"} {
		waits("a guard of "+key, func(c context.Context) error {
			_, err := s.Guard(c, key, Payload{"run", "acct", "1"}, GuardOptions{Agent: "bot"})
			return err
		})
	}
	waits("a rule set", func(c context.Context) error {
		_, err := s.SetPolicy(c, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
		return err
	})
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := guard("run:a", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root"); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
