package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The key's lock from schema 29 (issue 25): an agent's role locks only
// its own keys and new ones (TestPostgresAgentCannotHoldAnotherRolesKey,
// pgholes_fixed_test.go), a wait for a key's lock gives up after half a
// second naming its holder, and another role's conflicting attempt is
// still logged as a conflict on the client's path, which takes no lock of
// the key.

// holdKey calls tollgate_lock_key(key) as the role of u in a transaction
// it leaves open until the test ends, and returns the session's pid.
func holdKey(t *testing.T, u, key string) int {
	t.Helper()
	tx, err := rawDB(t, u).DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	var locked sql.NullInt64
	var pid int
	if err := tx.QueryRowContext(ctx, "SELECT tollgate_lock_key($1), pg_backend_pid()", key).Scan(&locked, &pid); err != nil || !locked.Valid {
		t.Fatalf("tollgate_lock_key(%s) as %s: %v %v, want the lock", key, roleOf(u), locked, err)
	}
	return pid
}

// TestPostgresKeyHolderIsNamed: bot2 holds its own key's lock in a
// transaction it leaves open (tollgate_lock_key, which its own key
// allows), and bot1 a new key's. Before schema 29 every other caller of
// the key waited until its attempt ran out ("lock key ...: timeout",
// exit 75 after 30 s from the CLI) naming no one; now each wait gives up
// within half a second with 55P03 (ErrBusy, exit 75) and names the
// holder's role and pid, which an operator can end with
// pg_terminate_backend: another session's call of tollgate_lock_key and
// the one-call guard of the new key. An operator's decision waits for
// the ledger-wide gate, which the open key transaction shares, and names
// the same session (schema 25).
func TestPostgresKeyHolderIsNamed(t *testing.T) {
	r := attackRoles(t)
	bot2, alice := openAt(t, r.bot2), openAt(t, r.alice)
	if a, err := bot2.Guard(ctx, "ask:own", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	ownPid := holdKey(t, r.bot2, "ask:own")
	named := fmt.Sprintf("the key ask:own is held by %s (pid %d)", roleOf(r.bot2), ownPid)

	start := time.Now()
	var ms sql.NullInt64
	wctx, cancel0 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel0()
	err := rawDB(t, r.bot2).DB.QueryRowContext(wctx, "SELECT tollgate_lock_key('ask:own')").Scan(&ms)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" || !strings.Contains(pe.Message, named) {
		t.Fatalf("another session of bot2 locking the held key: %v, want 55P03 saying %q", err, named)
	}
	if waited := time.Since(start); waited > 1500*time.Millisecond {
		t.Errorf("the wait for the held key gave up after %s, want about half a second", waited)
	}

	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = alice.Reject(dctx, "ask:own", "alice", "no")
	holder := fmt.Sprintf("is held by %s (pid %d)", roleOf(r.bot2), ownPid)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), holder) {
		t.Errorf("alice's reject of the held key: %v, want ErrBusy saying it %q", err, holder)
	}

	newPid := holdKey(t, r.bot1, "run:fresh")
	gctx, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	defer cancel2()
	_, err = bot2.Guard(gctx, "run:fresh", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"})
	want := fmt.Sprintf("the key run:fresh is held by %s (pid %d)", roleOf(r.bot1), newPid)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), want) {
		t.Errorf("bot2's one-call guard of a new key bot1 holds: %v, want ErrBusy saying %q", err, want)
	}
}

// TestPostgresClientPathConflictAcrossRoles: bot1's store takes the
// client's path (an injected clock), where a key transaction locks its
// key through tollgate_lock_key, which from schema 29 does not lock a
// key another role recorded. bot1's guard and record of bot2's key with
// another payload are still answered "conflict" and the attempts logged,
// also while bot2 holds its key's lock in an open transaction (before
// schema 29 they waited for it until their attempts ran out); an
// identical guard is answered the key's state.
func TestPostgresClientPathConflictAcrossRoles(t *testing.T) {
	r := attackRoles(t)
	bot2 := openAt(t, r.bot2)
	p := Payload{"ask", "t", "bot2's request"}
	if a, err := bot2.Guard(ctx, "ask:theirs", p, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	holdKey(t, r.bot2, "ask:theirs")
	bot1, err := Open(ctx, r.bot1, Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer bot1.Close()
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	other := Payload{"ask", "t", "bot1's attempt"}
	var ce *ConflictError
	if _, err := bot1.Guard(cctx, "ask:theirs", other, GuardOptions{Agent: "bot1"}); !errors.As(err, &ce) || !slices.Equal(ce.Differs, []string{"body"}) {
		t.Fatalf("bot1's guard of bot2's key with another body, bot2 holding it: %v, want a conflict on the body", err)
	}
	if _, err := bot1.Record(cctx, "ask:theirs", Payload{"run", "t", "x"}, RecordOptions{Agent: "bot1"}); !errors.As(err, &ce) {
		t.Fatalf("bot1's record of bot2's key with another payload: %v, want a conflict", err)
	}
	var logged int
	if err := rawDB(t, r.owner).QueryRow("SELECT count(*) FROM tollgate_private.conflicts WHERE action_key = 'ask:theirs' AND db_role = $1",
		roleOf(r.bot1)).Scan(&logged); err != nil || logged != 2 {
		t.Fatalf("conflicts logged for bot1's attempts: %d %v, want 2", logged, err)
	}
	if a, err := bot1.Guard(cctx, "ask:theirs", p, GuardOptions{Agent: "bot1"}); err != nil || a.State != StatePending || a.Verdict == Permitted {
		t.Fatalf("bot1's identical guard of bot2's pending key: %+v %v, want the pending state", a, err)
	}
}
