package ledger

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file are schema 16's: the one-call guard commits its
// events pending, under its key's lock alone, and whoever holds the
// chain head next seals them into the chain (ledger/pending.go).

// holdHead takes the chain head's row lock as the schema's owner, as a
// client key transaction does from its append to its commit, and
// returns its release.
func holdHead(t *testing.T, owner string) func() {
	t.Helper()
	tx, err := rawDB(t, owner).DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM chain_head WHERE one = 1 FOR UPDATE"); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	return func() { tx.Rollback() }
}

// scalar is one text value the owner reads.
func scalar(t *testing.T, owner *rawConn, query string) (s string) {
	t.Helper()
	if err := owner.QueryRow(query).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// pendingCount is how many events are committed and not yet sealed.
func pendingCount(t *testing.T, owner *rawConn) (n int) {
	t.Helper()
	if err := owner.QueryRow("SELECT count(*) FROM pending_events").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresGuardDoesNotWaitForTheHead: with the chain head held (a
// key transaction between its append and its commit, a sealer, a role
// that holds it open), a guard of a new key commits its facts and its
// events and answers: it waits on its key alone, and for the head after
// its commit at most maxSealWait. Its events are pending meanwhile,
// verify proves them against their rows and counts them, and the next
// holder of the head seals them. Before schema 16 the guard waited for
// the head and gave up with the attempt's time.
func TestPostgresGuardDoesNotWaitForTheHead(t *testing.T) {
	r := newPGRoles(t)
	bot := openAt(t, r.bot1)
	owner := rawDB(t, r.owner)
	release := holdHead(t, r.owner)
	start := time.Now()
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	a, err := bot.Guard(gctx, "run:head-held", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	cancel()
	took := time.Since(start)
	if err != nil || a.PermitID == "" {
		release()
		t.Fatalf("a guard with the head held: %+v %v", a, err)
	}
	if took > 3*time.Second {
		t.Errorf("the guard took %s with the head held (its wait for the head is bounded by %s)", took, time.Second)
	}
	if n := pendingCount(t, owner); n != 3 {
		t.Errorf("%d pending events, want the guard's 3", n)
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil || !rep.OK() || rep.Unsealed != 3 || rep.OldestUnsealedMS < 0 {
		t.Errorf("verify with 3 pending events: %+v %v", rep, err)
	}
	release()
	// The next guard's events are pending too (an agent's role never
	// takes the head, schema 39); the next writer that is not an agent's
	// role, here an operator's tollgate_seal, seals them all in order.
	if _, err := bot.Guard(ctx, "run:after", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	sealAsOperator(t, r)
	if n := pendingCount(t, owner); n != 0 {
		t.Errorf("%d events still pending after the operator's seal", n)
	}
	keys := scalar(t, owner, "SELECT string_agg(action_key, ',' ORDER BY seq) FROM events WHERE action_key LIKE 'run:%'")
	if keys != "run:head-held,run:head-held,run:head-held,run:after,run:after,run:after" {
		t.Errorf("the chain's order: %s", keys)
	}
	rep, err = r.admin.Verify(ctx)
	if err != nil || !rep.OK() || rep.Unsealed != 0 {
		t.Errorf("verify once sealed: %+v %v", rep, err)
	}
}

// TestPostgresSealBound: an event is pending from its guard's commit
// until the next holder of the chain head, and no later. From schema 39
// an agent's role never holds the head, so an agent's guard leaves its
// events pending whether the head is free or not, and its own seal
// seals nothing; an owner's guard that finds the head free seals its own
// events, one that finds it taken seals them after its commit as soon
// as it is free; and every writer that is not an agent's role (an
// operator's approval, an operator's tollgate_seal) seals what every
// guard left before its own events.
func TestPostgresSealBound(t *testing.T) {
	r := newPGRoles(t)
	bot1, bot2 := openAt(t, r.bot1), openAt(t, r.bot2)
	owner := rawDB(t, r.owner)
	if _, err := r.admin.Guard(ctx, "run:free", Payload{"run", "t", "b"}, GuardOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, owner); n != 0 {
		t.Fatalf("the owner's guard that found the head free left %d events pending", n)
	}
	// The head held for 300 ms: the owner's guard answers once it is
	// free, its events sealed by its own follow-up.
	release := holdHead(t, r.owner)
	go func() { time.Sleep(300 * time.Millisecond); release() }()
	if _, err := r.admin.Guard(ctx, "run:briefly-held", Payload{"run", "t", "b"}, GuardOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, owner); n != 0 {
		t.Errorf("a guard returned with %d of its events pending though the head came free within its wait", n)
	}
	// An agent's guard, the head free: pending; its seal seals nothing.
	if _, err := bot1.Guard(ctx, "run:agent", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	var sealed int64
	if err := rawDB(t, r.bot1).DB.QueryRow("SELECT tollgate_seal(NULL, 0)").Scan(&sealed); err != nil || sealed != 0 {
		t.Errorf("bot1's tollgate_seal: %d, %v; want 0", sealed, err)
	}
	if n := pendingCount(t, owner); n != 3 {
		t.Fatalf("%d pending events after an agent's guard, want its 3", n)
	}
	// Each later writer that is not an agent's role seals what it sees.
	for i, next := range []func() error{
		func() error {
			_, err := r.admin.Approve(ctx, "ask:to-approve", "root", "")
			return err
		},
		func() error { sealAsOperator(t, r); return nil },
	} {
		if i == 0 {
			if _, err := bot2.Guard(ctx, "ask:to-approve", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil {
				t.Fatal(err)
			}
		} else if _, err := bot2.Guard(ctx, "run:next-guard", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil {
			t.Fatal(err)
		}
		if err := next(); err != nil {
			t.Fatal(err)
		}
		if n := pendingCount(t, owner); n != 0 {
			t.Errorf("the next writer (%d) left %d events pending", i, n)
		}
	}
	verifyOK(t, r.admin)
}

// sealAsOperator seals every pending event as the operator's role, as
// any writer that is not an agent's role does first.
func sealAsOperator(t *testing.T, r pgRoles) {
	t.Helper()
	var n int64
	if err := rawDB(t, r.alice).DB.QueryRow("SELECT tollgate_seal(NULL, 0)").Scan(&n); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresSealingUnderLoad: several OS processes, under two agents'
// roles, guard new keys at once while one of them is killed mid-run;
// the events of every committed guard end in the chain, each once, and
// verify proves it. Every guard left its events pending (agents' roles,
// schema 39) for the next writer that is not an agent's, which an
// operator's seal is.
func TestPostgresSealingUnderLoad(t *testing.T) {
	r := newPGRoles(t)
	const procs, keys = 6, 40
	var wg sync.WaitGroup
	errs := make(chan string, procs)
	for i := 0; i < procs; i++ {
		u := r.bot1
		if i%2 == 1 {
			u = r.bot2
		}
		cmd := childCmd("seal", u, "TOLLGATE_CHILD_ID="+strconv.Itoa(i), "TOLLGATE_CHILD_KEYS="+strconv.Itoa(keys))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i == 0 {
				time.Sleep(150 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				return
			}
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Sprintf("process %d: %v: %s", i, err, out.String())
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	owner := rawDB(t, r.owner)
	if _, err := openAt(t, r.bot2).Guard(ctx, "run:last", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"}); err != nil {
		t.Fatal(err)
	}
	// Agents' events wait for a writer that is not an agent's role
	// (schema 39): the operator's seal.
	sealAsOperator(t, r)
	if n := pendingCount(t, owner); n != 0 {
		t.Errorf("%d events pending after the operator's seal", n)
	}
	var guards, events, permits int
	if err := owner.QueryRow(`SELECT (SELECT count(*) FROM intents WHERE action_key LIKE 'run:%'),
		(SELECT count(*) FROM events WHERE action_key LIKE 'run:%'), (SELECT count(*) FROM permits)`).Scan(&guards, &events, &permits); err != nil {
		t.Fatal(err)
	}
	if guards < (procs-1)*keys+1 || events != 3*guards || permits != guards {
		t.Errorf("%d guards, %d events, %d permits: want at least %d guards, three events and a permit each", guards, events, permits, (procs-1)*keys+1)
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil || !rep.OK() || rep.Unsealed != 0 {
		t.Errorf("verify: %+v %v", rep, err)
	}
}

// sealChild guards keys new keys on the ledger at u, one after another.
func sealChild(u string, id, keys int) int {
	s, err := Open(ctx, u, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	for i := 0; i < keys; i++ {
		if _, err := s.Guard(ctx, fmt.Sprintf("run:p%d-%d", id, i), Payload{"run", "t", "b"}, GuardOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestPostgresPendingEventsRefuseAgents: an agent's role, through psql,
// cannot write, change, delete or reorder pending events, cannot seal
// one out of turn or forge one, and cannot stall guards by holding the
// head: it reads them as it reads events, and calls tollgate_seal, which
// seals what is pending, as it is, in pending-id order.
func TestPostgresPendingEventsRefuseAgents(t *testing.T) {
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	release := holdHead(t, r.owner)
	got := callFn(t, rawDB(t, r.bot1).DB, honestFn("run:victim", Payload{"run", "t", "b"}, "bot1"))
	release()
	if got.path != "new" || pendingCount(t, owner) != 3 {
		t.Fatalf("the victim's guard: %+v, %d pending", got, pendingCount(t, owner))
	}
	fingerprint := func() string {
		return scalar(t, owner, `SELECT concat_ws('/', (SELECT string_agg(concat_ws(',', id, action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256), ';' ORDER BY id)
			FROM pending_events), (SELECT count(*) FROM events), (SELECT hash FROM chain_head))`)
	}
	before := fingerprint()
	script := []string{
		`INSERT INTO pending_events (action_key, type, actor, detail, at_ms) VALUES ('run:victim', 'disagreement_flagged', 'bot2', '{}', 1);`,
		`UPDATE pending_events SET detail = '{"lease_ms":1}' WHERE type = 'permit_issued';`,
		`UPDATE pending_events SET id = -id;`,
		`DELETE FROM pending_events;`,
		`TRUNCATE pending_events;`,
		`INSERT INTO tollgate_private.sealing VALUES (txid_current());`,
		`SELECT tollgate_private.seal_pending();`,
		`SELECT tollgate_sealing();`,
		`SELECT tollgate_append_events(ARRAY[action_key], ARRAY[type], ARRAY[actor], ARRAY[detail], ARRAY[at_ms], ARRAY[fact_table], ARRAY[fact_row], ARRAY[fact_sha256]) FROM pending_events WHERE type = 'permit_issued';`,
		`SELECT tollgate_append_event(action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256) FROM pending_events WHERE type = 'recorded';`,
		`SELECT 1 FROM chain_head FOR UPDATE;`,
		`SELECT 1 FROM pending_events FOR UPDATE;`,
	}
	errsByLine := psqlErrors(t, r.bot2, strings.Join(script, "\n")+"\n")
	for i, q := range script {
		if errsByLine[i+1] == "" {
			t.Errorf("an agent's role ran %.70s", q)
		}
	}
	if after := fingerprint(); after != before {
		t.Errorf("the pending events or the chain changed:\n%s\nwas\n%s", after, before)
	}
	// tollgate_seal in a transaction left open stalls no guard: from
	// schema 39 an agent's call seals nothing and takes no head, and
	// another agent's guard answers within its bound.
	tx, err := rawDB(t, r.bot2).DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT tollgate_seal(NULL, 0)").Scan(&n); err != nil || n != 0 {
		tx.Rollback()
		t.Fatalf("tollgate_seal as an agent: %d %v", n, err)
	}
	start := time.Now()
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	a, err := openAt(t, r.bot1).Guard(gctx, "run:while-held", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	cancel()
	if err != nil || a.PermitID == "" || time.Since(start) > 3*time.Second {
		t.Errorf("a guard while an agent holds the head: %+v %v after %s", a, err, time.Since(start))
	}
	tx.Rollback()
	if err := owner.QueryRow("SELECT tollgate_seal(NULL, 0)").Scan(&n); err != nil || n != 6 {
		t.Errorf("sealing after: %d %v, want the 6 pending events", n, err)
	}
	if keys := scalar(t, owner, "SELECT string_agg(type, ',' ORDER BY seq) FROM events WHERE action_key LIKE 'run:%'"); keys != "recorded,policy_evaluated,permit_issued,recorded,policy_evaluated,permit_issued" {
		t.Errorf("sealed in another order: %s", keys)
	}
	verifyOK(t, r.admin)
}

// TestPostgresVerifyChecksPendingEvents: verify proves a pending event's
// fact row as it proves a sealed event's, before it is sealed: a pending
// event whose fact hash is not its row's, one of another type than its
// table's, and a fact row whose pending event was deleted (a restored
// copy that lost it) are each named. Before schema 16's verify step, the
// fact rows of pending events were named as committed by no event.
func TestPostgresVerifyChecksPendingEvents(t *testing.T) {
	for _, c := range []struct{ name, edit, table string }{
		{"a fact hash edited", "UPDATE pending_events SET fact_sha256 = repeat('0', 64) WHERE type = 'permit_issued'", "permits"},
		{"a type edited", "UPDATE pending_events SET type = 'approval_requested' WHERE type = 'permit_issued'", "pending_events"},
		{"an event deleted", "DELETE FROM pending_events WHERE type = 'permit_issued'", "permits"},
	} {
		r := newPGRoles(t)
		owner := rawDB(t, r.owner)
		release := holdHead(t, r.owner)
		got := callFn(t, rawDB(t, r.bot1).DB, honestFn("run:pending", Payload{"run", "t", "b"}, "bot1"))
		release()
		if got.path != "new" || pendingCount(t, owner) != 3 {
			t.Fatalf("the guard: %+v", got)
		}
		rep, err := r.admin.Verify(ctx)
		if err != nil || !rep.OK() || rep.Unsealed != 3 {
			t.Fatalf("verify with 3 pending events: %+v %v", rep, err)
		}
		tx, err := owner.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"ALTER TABLE pending_events DISABLE TRIGGER USER", c.edit, "ALTER TABLE pending_events ENABLE TRIGGER USER"} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				tx.Rollback()
				t.Fatalf("%s: %s: %v", c.name, q, err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		rep, err = r.admin.Verify(ctx)
		named := false
		for _, p := range rep.Problems {
			named = named || p.Table == c.table
		}
		if err != nil || rep.OK() || !named {
			t.Errorf("%s: verify %+v %v, want a problem in %s", c.name, rep.Problems, err, c.table)
		}
	}
}
