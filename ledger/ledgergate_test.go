package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestPostgresAgentCannotHoldTheLedgerLock: an agent's role (bot1), or
// an operator's (alice), runs SELECT pg_advisory_lock(1953459308, 0) in
// a session it keeps: PostgreSQL grants the function to PUBLIC. While
// that advisory lock was the ledger-wide lock every guard takes shared
// (development schemas up to 22), another agent's guard then waited on
// it; the ledger-wide lock is a table lock no such role can take, and
// the guard is permitted while the attacker holds the advisory lock, as
// is an operator's ledger-wide change.
func TestPostgresAgentCannotHoldTheLedgerLock(t *testing.T) {
	r := newPGRoles(t)
	for _, attacker := range []string{r.bot1, r.alice} {
		// One session: the lock is the session's. It is taken
		// in a transaction left open, since behind a pooler in
		// transaction mode (CI's pgbouncer) only an open
		// transaction keeps the server session, which the pooler
		// would otherwise close when idle, letting the lock go.
		conn, err := rawDB(t, attacker).DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(1953459308, 0)"); err != nil {
			t.Fatalf("the advisory lock: %v", err)
		}
		got := boundedGuard(t, r, fmt.Sprintf("run:behind-%d", len(attacker)))
		changeErr := boundedChange(r)
		conn.ExecContext(ctx, "SELECT pg_advisory_unlock_all()")
		conn.Rollback()
		switch {
		case got.code != "" || got.permit == "":
			t.Errorf("another agent's guard while the old ledger-wide lock is held: %+v, want a permit", got)
		case changeErr != nil:
			t.Errorf("an operator's change while the old ledger-wide lock is held: %v", changeErr)
		}
	}
}

// boundedGuard is bot2's honest guard of a new key, its lock waits
// bounded at one second.
func boundedGuard(t *testing.T, r pgRoles, key string) fnReply {
	t.Helper()
	c := honestFn(key, Payload{"run", "t", "b"}, "bot2")
	c.wait = int64(1000)
	return callFn(t, rawDB(t, r.bot2).DB, c)
}

// boundedChange is an operator's ledger-wide change (a rule), given
// three seconds.
func boundedChange(r pgRoles) error {
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := r.admin.SetPolicy(sctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
	return err
}

// TestPostgresLedgerGateOutOfReach: schema 23's ledger-wide lock is a
// relation lock on tollgate_private.ledger_gate. An agent's role and an
// operator's try every direct way to hold a lock on it that conflicts
// with the guards' ROW SHARE or the operators' EXCLUSIVE, each in a
// transaction left open: LOCK TABLE in each of PostgreSQL's eight
// modes, SELECT ... FOR UPDATE, NO KEY UPDATE, SHARE and KEY SHARE, a
// view, a child table, TRUNCATE, ANALYZE, ALTER and DROP. The database
// refuses each (no role but the owner may use the schema, and none is
// granted anything on the table). The one lock a role can take, ACCESS
// SHARE through a function that opens a relation by its number, is held
// open meanwhile: another agent's guard bounded at one second is
// permitted, and an operator's change goes through. The owner's catalog
// shows no grant, no view, no child and no trigger on the table.
func TestPostgresLedgerGateOutOfReach(t *testing.T) {
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	var gate int64
	var owned bool
	var grants, views, children, triggers int
	err := owner.DB.QueryRow(`SELECT c.oid::int8, c.relowner = n.nspowner,
		(SELECT count(*) FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a WHERE a.grantee <> c.relowner),
		(SELECT count(*) FROM pg_depend d WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = c.oid),
		(SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid),
		(SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = 'tollgate_private.ledger_gate'::regclass`).Scan(&gate, &owned, &grants, &views, &children, &triggers)
	if err != nil {
		t.Fatal(err)
	}
	if !owned || grants+views+children+triggers != 0 {
		t.Errorf("ledger_gate: the schema owner's %v, %d grants to others, %d views, %d children, %d triggers; want none", owned, grants, views, children, triggers)
	}
	refused := []string{}
	for _, mode := range []string{"ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"} {
		refused = append(refused, "LOCK TABLE tollgate_private.ledger_gate IN "+mode+" MODE")
	}
	for _, how := range []string{"UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"} {
		refused = append(refused, "SELECT * FROM tollgate_private.ledger_gate FOR "+how)
	}
	refused = append(refused,
		"CREATE TEMP VIEW gate_view AS SELECT * FROM tollgate_private.ledger_gate",
		"CREATE TEMP TABLE gate_child () INHERITS (tollgate_private.ledger_gate)",
		"TRUNCATE tollgate_private.ledger_gate",
		"ANALYZE tollgate_private.ledger_gate",
		"ALTER TABLE tollgate_private.ledger_gate ADD COLUMN x int",
		"DROP TABLE tollgate_private.ledger_gate",
		fmt.Sprintf("LOCK TABLE %d", gate), // not a name: a syntax error, no lock
	)
	var open []*sql.Tx
	defer func() {
		for _, tx := range open {
			tx.Rollback()
		}
	}()
	for _, who := range []string{r.bot1, r.alice} {
		db := rawDB(t, who).DB
		for _, q := range refused {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx.ExecContext(ctx, q)
			if pe := (*pgconn.PgError)(nil); err == nil || !errors.As(err, &pe) {
				t.Errorf("%s: %q: %v, want the database's refusal", roleOf(who), q, err)
				open = append(open, tx)
				continue
			}
			tx.Rollback()
		}
		// The lock a role can take: ACCESS SHARE, which conflicts only
		// with ACCESS EXCLUSIVE.
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "SELECT pg_relation_size($1::oid)", gate); err != nil {
			t.Logf("%s: pg_relation_size by number: %v", roleOf(who), err)
			tx.Rollback()
		} else {
			open = append(open, tx)
		}
	}
	if got := boundedGuard(t, r, "run:past-the-gate"); got.code != "" || got.permit == "" {
		t.Errorf("another agent's guard while the attackers' transactions are open: %+v", got)
	}
	if err := boundedChange(r); err != nil {
		t.Errorf("an operator's change while the attackers' transactions are open: %v", err)
	}
}

// roleOf is the role a test URL logs in as, for messages.
func roleOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "?"
	}
	return p.User.Username()
}
