package doctor_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/doctor"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestDoctorNamesWhoHoldsTheLedgerLock: an agent's role takes another
// agent's key's lock at session level (PostgreSQL grants
// pg_advisory_lock to PUBLIC), which no transaction or idle timeout
// ends, and that agent's guard of the key waits behind it (from schema
// 23 the ledger-wide lock is a table lock no agent can take:
// ledger.TestPostgresAgentCannotHoldTheLedgerLock). doctor fails pg.lock-holders naming the
// holder's pid and role, and passes again once the lock is let go (the
// guard then goes through). pg.advisory-locks warns while agents may
// take advisory locks; after the hardening it names, run as a superuser
// in the ledger's database, it passes, the agent's own
// pg_advisory_lock is refused, and guards and decisions still work (their
// locks are taken inside tollgate's functions, as the owner).
func TestDoctorNamesWhoHoldsTheLedgerLock(t *testing.T) {
	ctx := context.Background()
	owner := pgtest.DB(t)
	admin, err := ledger.Open(ctx, owner, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, r := range []approvals.Rule{{Pattern: "run", Mode: approvals.Auto}, {Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}} {
		if _, err := admin.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	holderURL := pgtest.Role(t, owner, "holder", "tollgate_agent")
	botURL := pgtest.Role(t, owner, "bot", "tollgate_agent")
	bot, err := ledger.Open(ctx, botURL, ledger.Options{RetryFor: 20 * time.Second, AttemptTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	doctor.SlowLockWait = 300 * time.Millisecond
	defer func() { doctor.SlowLockWait = 5 * time.Second }()
	find := func(id string) doctor.Finding {
		t.Helper()
		f, ok := report(doctor.CheckPostgres(ctx, botURL)).Find(id)
		if !ok {
			t.Fatalf("no %s finding", id)
		}
		return f
	}
	if f := find("pg.lock-holders"); !f.OK {
		t.Fatalf("no one holds a lock yet: %+v", f)
	}
	if f := find("pg.advisory-locks"); f.OK || f.Severity != doctor.Warn || !strings.Contains(f.Fix, "REVOKE EXECUTE") {
		t.Fatalf("agents may take advisory locks on a new database: %+v", f)
	}

	holder := openDB(t, holderURL)
	conn, err := holder.Conn(ctx) // one session: the lock is the session's
	if err != nil {
		t.Fatal(err)
	}
	var role string
	const key = "run:behind-the-holder"
	if err := conn.QueryRowContext(ctx, "SELECT current_user FROM (SELECT pg_advisory_lock(1953459309, hashtext($1))) l", key).Scan(&role); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bot.Guard(ctx, key, ledger.Payload{Kind: "run", Target: "t", Body: "b"}, ledger.GuardOptions{Agent: "bot"})
		done <- err
	}()
	var f doctor.Finding
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if f = find("pg.lock-holders"); !f.OK {
			break
		}
	}
	if f.OK || f.Severity != doctor.Fail || !strings.Contains(f.Message, "role "+role) || !strings.Contains(f.Message, "a key's lock") ||
		!strings.Contains(f.Fix, "pg_terminate_backend") {
		t.Fatalf("a guard waits behind %s's session lock, and doctor says: %+v", role, f)
	}
	select {
	case err := <-done:
		t.Fatalf("the guard went through while its key's lock was held: %v", err)
	default:
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(1953459309, hashtext($1))", key); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the guard after the lock was let go: %v", err)
	}
	if f := find("pg.lock-holders"); !f.OK {
		t.Fatalf("the lock was let go: %+v", f)
	}

	// The hardening doctor names, run as a superuser in the ledger's
	// database.
	var schemaOwner string
	if err := openDB(t, owner).QueryRow("SELECT current_user").Scan(&schemaOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := openDB(t, inDatabase(t, pgtest.Admin(t), owner)).Exec(doctor.AdvisoryRevokeSQL(schemaOwner)); err != nil {
		t.Fatal(err)
	}
	if f := find("pg.advisory-locks"); !f.OK {
		t.Fatalf("after the revoke: %+v", f)
	}
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock(1953459309, hashtext($1))", key)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42501" {
		t.Fatalf("an agent's own advisory lock after the revoke: %v, want permission denied", err)
	}
	conn.Close()
	if a, err := bot.Guard(ctx, "run:after-the-revoke", ledger.Payload{Kind: "run", Target: "t", Body: "b"}, ledger.GuardOptions{Agent: "bot"}); err != nil || a.PermitID == "" {
		t.Fatalf("a guard after the revoke: %+v %v", a, err)
	}
	if _, err := bot.Guard(ctx, "ask:after-the-revoke", ledger.Payload{Kind: "ask", Target: "t", Body: "b"}, ledger.GuardOptions{Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Approve(ctx, "ask:after-the-revoke", "root", "ok"); err != nil {
		t.Fatalf("a decision after the revoke: %v", err)
	}
}

// openDB opens u, closed when the test ends.
func openDB(t *testing.T, u string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// inDatabase is server's URL (its role and address) pointed at the
// database dbURL names.
func inDatabase(t *testing.T, server, dbURL string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = d.Path
	return u.String()
}

// TestDoctorNamesWhoHoldsTheLedgerGate: from schema 23 the ledger-wide
// lock is a relation lock on tollgate_private.ledger_gate. An agent's
// guard called in a transaction the agent leaves open holds it (ROW
// SHARE) until that transaction ends, and a writer of ledger-wide facts
// (here the schema's owner, locking the table EXCLUSIVE itself, without
// the functions' half-second bound) waits behind it: doctor fails
// pg.lock-holders naming the agent's pid and role and the ledger-wide
// lock, and passes once the transaction ends.
func TestDoctorNamesWhoHoldsTheLedgerGate(t *testing.T) {
	ctx := context.Background()
	owner := pgtest.DB(t)
	admin, err := ledger.Open(ctx, owner, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	botURL := pgtest.Role(t, owner, "bot", "tollgate_agent")
	doctor.SlowLockWait = 300 * time.Millisecond
	defer func() { doctor.SlowLockWait = 5 * time.Second }()
	find := func() doctor.Finding {
		t.Helper()
		f, ok := report(doctor.CheckPostgres(ctx, botURL)).Find("pg.lock-holders")
		if !ok {
			t.Fatal("no pg.lock-holders finding")
		}
		return f
	}
	tx, err := openDB(t, botURL).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var role string
	if err := tx.QueryRowContext(ctx, "SELECT current_user FROM (SELECT tollgate_lock_key('run:held-open')) l").Scan(&role); err != nil {
		t.Fatal(err)
	}
	waiter, err := openDB(t, owner).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Rollback()
	// Cancelled first on a failure: a rollback waits for the statement.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	locked := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(wctx, "LOCK TABLE tollgate_private.ledger_gate IN EXCLUSIVE MODE")
		locked <- err
	}()
	var f doctor.Finding
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if f = find(); !f.OK {
			break
		}
	}
	if f.OK || !strings.Contains(f.Message, "role "+role) || !strings.Contains(f.Message, "the ledger-wide lock (RowShareLock)") {
		t.Fatalf("a ledger-wide change waits behind %s's open transaction, and doctor says: %+v", role, f)
	}
	tx.Rollback()
	if err := <-locked; err != nil {
		t.Fatalf("the owner's lock after the agent's transaction ended: %v", err)
	}
	waiter.Rollback()
	if f := find(); !f.OK {
		t.Fatalf("the lock was let go: %+v", f)
	}
}
