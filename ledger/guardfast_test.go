package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresGuardFastPathMarkerStaysTheGuards: schema 21 lets the
// schema's triggers skip their checks of a row while tollgate_guard marks
// its transaction as writing (tollgate_private.guard_writing), since the
// guard computed every value of the rows it writes. An agent's role, over
// its own connection, tries to have that mark present for writes of its
// own through the generic functions: after a guard in the same
// transaction, in one multi-statement query with a guard, after a guard
// that failed midway under a savepoint it rolls back to, and by writing
// the mark itself. Its writes are a policy evaluation of "auto" for a key
// whose rule asks for approval, and an "approved" event for a decision
// that does not exist: each is refused, and nothing stored changed. The
// control plants the mark for the attacker's transaction, as a guard that
// left it behind would, and sees both writes accepted: the attacks test
// the mark. Run with TOLLGATE_ATTACK_MUTATION='CREATE RULE keep AS ON
// DELETE TO tollgate_private.guard_writing DO INSTEAD NOTHING' (the
// guard's removal of its mark undone) and the first two attacks succeed.
func TestPostgresGuardFastPathMarkerStaysTheGuards(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot2)
	bot2 := openAt(t, r.bot2)
	first, err := bot2.Guard(ctx, "run:fast-first", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"})
	if err != nil || first.Verdict != Permitted {
		t.Fatalf("the honest guard: %+v %v", first, err)
	}
	var usedPermit string
	if err := owner.QueryRow("SELECT permit_id FROM permits WHERE action_key = 'run:fast-first'").Scan(&usedPermit); err != nil {
		t.Fatal(err)
	}
	before := ledgerState(t, owner)
	conn, err := raw.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) string {
		t.Helper()
		_, err := conn.ExecContext(ctx, q, args...)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return ""
		case errors.As(err, &pe):
			return pe.Code
		}
		t.Fatalf("%.60s: %v", q, err)
		return ""
	}
	// The two forged writes, each in the attacker's open transaction.
	forgeEval := func(key string) string {
		t.Helper()
		p, now := Payload{"ask", "t", "b"}, time.Now().UnixMilli()
		if c := exec("SELECT tollgate_record_intent($1, $2)", key, p.Digest()); c != "" {
			return c
		}
		if c := exec("SELECT "+insertFactFn+"payloads($1, $2)",
			[]string{"action_key", "payload_sha256", "canonical", "redacted", "kind", "kind_sha256", "target_sha256", "body_sha256", "agent", "recorded_ms", "context_sha256", "context"},
			[]string{key, p.Digest(), string(p.Canonical()), "0", "ask", sha256Hex([]byte("ask")), sha256Hex([]byte("t")), sha256Hex([]byte("b")), "bot2", fmt.Sprint(now), "", ""}); c != "" {
			return c
		}
		return exec("SELECT "+insertFactFn+"policy_evals($1, $2)",
			[]string{"action_key", "mode", "ttl_ms", "rule_id", "pattern", "at_ms", "approvers", "explain"},
			[]string{key, "auto", "0", "1", "ask", fmt.Sprint(now), "1", ""})
	}
	forgedEvent := `SELECT * FROM tollgate_append_events(ARRAY['run:fast-first'], ARRAY['approved'], ARRAY['alice'], ARRAY['{"reason":"ok"}'],
		ARRAY[(extract(epoch FROM now()) * 1000)::bigint], ARRAY['decisions'], ARRAY['run:fast-first'], ARRAY[repeat('a', 64)])`
	guardSQL := func(key string) string {
		c := honestFn(key, Payload{"run", "t", "b"}, "bot2")
		return fmt.Sprintf("SELECT o_path FROM tollgate_guard('%s', '%s', '%s', 'run', 't', '%s', 'bot2', '', '', 60000, '%s', false, 0)",
			key, c.sha, c.canonical, c.bodySHA, c.permit)
	}
	guardIn := func(key, permit string) fnReply {
		t.Helper()
		c := honestFn(key, Payload{"run", "t", "b"}, "bot2")
		if permit != "" {
			c.permit = permit
		}
		return callFn(t, conn, c)
	}
	attacks := []struct {
		name string
		// run makes the attempt and answers the code each forgery got.
		run func(n int) []string
	}{
		{"after a guard in the same transaction", func(n int) []string {
			var codes []string
			for i, forge := range []func() string{func() string { return forgeEval(fmt.Sprintf("ask:fast-%d", n)) }, func() string { return exec(forgedEvent) }} {
				exec("BEGIN")
				if got := guardIn(fmt.Sprintf("run:fast-%d-%d", n, i), ""); got.path != "new" {
					t.Errorf("the guard before the forgery answered %+v", got)
				}
				codes = append(codes, forge())
				exec("ROLLBACK")
			}
			return codes
		}},
		{"in one query with a guard", func(n int) []string {
			exec("BEGIN")
			c := exec(guardSQL(fmt.Sprintf("run:fast-%d", n)) + "; " + forgedEvent)
			exec("ROLLBACK")
			return []string{c}
		}},
		{"after a guard that failed while writing", func(n int) []string {
			var codes []string
			for i, forge := range []func() string{func() string { return forgeEval(fmt.Sprintf("ask:fast-%d", n)) }, func() string { return exec(forgedEvent) }} {
				exec("BEGIN")
				exec("SAVEPOINT s")
				// A permit id already issued: the guard fails at its permit,
				// after its first writes.
				if got := guardIn(fmt.Sprintf("run:fast-%d-%d", n, i), usedPermit); got.code != "23505" {
					t.Errorf("the guard that should fail at its permit answered %+v", got)
				}
				exec("ROLLBACK TO SAVEPOINT s")
				codes = append(codes, forge())
				exec("ROLLBACK")
			}
			return codes
		}},
		{"by writing the mark", func(int) []string {
			exec("BEGIN")
			c := exec("INSERT INTO tollgate_private.guard_writing VALUES (txid_current())")
			exec("ROLLBACK")
			return []string{c, exec("SELECT tollgate_guard_writing()")}
		}},
	}
	for n, a := range attacks {
		for i, code := range a.run(n) {
			if code == "" {
				t.Errorf("%s: forgery %d was stored", a.name, i)
			}
		}
	}
	if after := ledgerState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	verifyOK(t, r.admin)

	// The control: the mark present for the attacker's transaction.
	exec("BEGIN")
	var txid int64
	if err := conn.QueryRowContext(ctx, "SELECT txid_current()").Scan(&txid); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec("INSERT INTO tollgate_private.guard_writing VALUES ($1)", txid); err != nil {
		t.Fatal(err)
	}
	codes := []string{forgeEval("ask:fast-control"), exec(forgedEvent)}
	exec("ROLLBACK")
	if _, err := owner.Exec("DELETE FROM tollgate_private.guard_writing WHERE txid = $1", txid); err != nil {
		t.Fatal(err)
	}
	if strings.Join(codes, "") != "" {
		t.Errorf("with the mark planted the forgeries were still refused (%q): the attacks above do not test the mark", codes)
	}
}
