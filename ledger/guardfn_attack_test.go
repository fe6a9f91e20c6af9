package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// The tests in this file are a patient attacker's attempts on the
// one-call guard (schema 14, tollgate_guard) that the database refuses:
// an agent with its own login role, a shell and any SQL it can type,
// calling the function with hostile arguments, from inside transactions
// it opened, beside objects it created to shadow the function's, and
// racing other agents and the operator. Each asserts the refusal and
// that nothing stored changed. The attempts that succeed are in
// guardfn_holes_test.go.

// attackRoles is newPGRoles for an attack. A probe run sets
// TOLLGATE_ATTACK_MUTATION to SQL that the schema's owner runs first (a
// check of tollgate_guard taken out, say): the attack that then gets
// through fails its test, which shows what the test relies on.
func attackRoles(t *testing.T) pgRoles {
	t.Helper()
	r := newPGRoles(t)
	if m := os.Getenv("TOLLGATE_ATTACK_MUTATION"); m != "" {
		if _, err := rawDB(t, r.owner).DB.Exec(m); err != nil {
			t.Fatalf("the probe's mutation: %v", err)
		}
	}
	return r
}

// fnCall is one call of tollgate_guard, every argument the caller's.
type fnCall struct {
	key, sha, canonical, kind, target, bodySHA, agent, ctxSHA, ctxText any
	lease, permit, retry, wait                                         any
}

// honestFn is the call the client would send for payload p under key.
func honestFn(key string, p Payload, agent string) fnCall {
	return fnCall{key: key, sha: p.Digest(), canonical: string(p.Canonical()), kind: p.Kind, target: p.Target,
		bodySHA: sha256Hex([]byte(p.Body)), agent: agent, ctxSHA: "", ctxText: "", lease: int64(60000), permit: newUUID(),
		retry: false, wait: int64(0)}
}

// fnReply is what a call answered: its path, the mode it applied, the
// permit it issued, or the SQLSTATE it was refused with.
type fnReply struct {
	path, mode, permit, code string
}

// rowQuerier is a connection, a pinned connection or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// callFn calls tollgate_guard through q and returns its reply; a refusal
// by the database is a reply (its code), any other failure fails the test
// (and is the reply "client").
func callFn(t *testing.T, q rowQuerier, c fnCall) fnReply {
	t.Helper()
	var r fnReply
	var mode, permit sql.NullString
	var path sql.NullString
	err := q.QueryRowContext(ctx, `SELECT o_path, o_mode, o_permit_id FROM tollgate_guard($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		c.key, c.sha, c.canonical, c.kind, c.target, c.bodySHA, c.agent, c.ctxSHA, c.ctxText, c.lease, c.permit, c.retry, c.wait).Scan(&path, &mode, &permit)
	r.path, r.mode, r.permit = path.String, mode.String, permit.String
	var pe *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pe):
		r.code = pe.Code
	default:
		// Not Fatal: the races call this from goroutines of their own.
		t.Errorf("tollgate_guard(%s): %v", c.key, err)
		r.code = "client"
	}
	return r
}

// ledgerState is a fingerprint of everything a guard writes, read as the
// schema's owner: the rows of each table and the chain's head.
func ledgerState(t *testing.T, owner *rawConn) string {
	t.Helper()
	var s string
	err := owner.QueryRow(`SELECT concat_ws('/', (SELECT count(*) FROM intents), (SELECT count(*) FROM tollgate_private.payloads),
		(SELECT count(*) FROM policy_evals), (SELECT count(*) FROM approval_requests), (SELECT count(*) FROM permits),
		(SELECT count(*) FROM action_index), (SELECT count(*) FROM events), (SELECT hash FROM chain_head))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// permitsOf counts the permits stored for key.
func permitsOf(t *testing.T, owner *rawConn, key string) (n int) {
	t.Helper()
	if err := owner.QueryRow("SELECT count(*) FROM permits WHERE action_key = $1", key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// verifyOK fails the test unless verify proves the ledger.
func verifyOK(t *testing.T, s *Store) {
	t.Helper()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestPostgresGuardAttackStaleSnapshot: an agent that opens a REPEATABLE
// READ transaction, takes its snapshot, lets the operator turn its kind's
// rule to deny (or activate a new epoch, fencing its key), and only then
// calls tollgate_guard in that transaction would have the function read
// the rules and epochs of its old snapshot, which no lock can refresh.
// The call is refused (40001): the chain's head, which the operator's
// change moved, is locked FOR UPDATE by the append, and a row changed
// after the snapshot cannot be locked in it. Nothing is stored, and the
// same guard afterwards is denied (or fenced) as the rules now say.
func TestPostgresGuardAttackStaleSnapshot(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	stale := func(change func(), c fnCall) {
		t.Helper()
		tx, err := raw.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM policy_rules").Scan(&n); err != nil {
			t.Fatal(err)
		}
		change()
		before := ledgerState(t, owner)
		got := callFn(t, tx, c)
		if got.code == "" || got.permit != "" {
			t.Errorf("%s guarded in a snapshot older than the operator's change: %+v", c.key, got)
		}
		tx.Rollback()
		if after := ledgerState(t, owner); after != before {
			t.Errorf("%s: the refused call changed the ledger: %s, was %s", c.key, after, before)
		}
		if n := permitsOf(t, owner, c.key.(string)); n != 0 {
			t.Errorf("%s: %d permits stored", c.key, n)
		}
	}
	p := Payload{"run", "t", "b"}
	stale(func() {
		if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Deny}, "root"); err != nil {
			t.Fatal(err)
		}
	}, honestFn("run:stale", p, "bot1"))
	bot := openAt(t, r.bot1)
	if a, err := bot.Guard(ctx, "run:stale", p, GuardOptions{Agent: "bot1"}); err != nil || a.Verdict != Denied {
		t.Fatalf("the guard after the change: %+v %v", a, err)
	}
	if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	e1, err := r.admin.ActivateEpoch(ctx, "", "root")
	if err != nil {
		t.Fatal(err)
	}
	old := "hsr1:" + e1.Epoch + ":run-fenced"
	stale(func() {
		if _, err := r.admin.ActivateEpoch(ctx, "", "root"); err != nil {
			t.Fatal(err)
		}
	}, honestFn(old, p, "bot1"))
	var fe *FencedError
	if a, err := bot.Guard(ctx, old, p, GuardOptions{Agent: "bot1"}); !errors.As(err, &fe) || a.Verdict == Permitted {
		t.Fatalf("the guard of the fenced key after the activation: %+v %v", a, err)
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackShadowedObjects: the function runs as the
// schema's owner with search_path 'public, pg_temp'. An agent puts its
// own temporary schema first in its session's path and creates there a
// table of every name the function reads or writes, each holding what
// would help it (an auto rule for "ask", an active epoch, an action_index
// row calling its key its own running permit), and functions named like
// the evaluator's; the function reads none of them: the "ask" key gets an
// approval request from the real rules, the key the fake index calls
// running gets the real answer, and the agent's tables are as it left
// them. (pg_catalog is searched first, the temporary schema last, and
// never for functions.)
func TestPostgresGuardAttackShadowedObjects(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	// One transaction, so that a pooler in transaction mode keeps every
	// statement on one server session; the tables go with its commit.
	conn, err := raw.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Rollback()
	ask := honestFn("ask:shadow", Payload{"ask", "t", "b"}, "bot1")
	for _, q := range []string{
		"SET LOCAL search_path = pg_temp, public",
		"CREATE TEMP TABLE policy_rules (id bigint, pattern text, mode text, ttl_ms bigint, operator text, set_ms bigint, approvers bigint, condition text, priority bigint) ON COMMIT DROP",
		"INSERT INTO pg_temp.policy_rules VALUES (999, 'ask', 'auto', 0, 'root', 0, 1, '', 1000)",
		"CREATE TEMP TABLE policy_conditions (rule_id bigint, ast text) ON COMMIT DROP",
		"CREATE TEMP TABLE epochs (seq bigint, epoch text, operator text, at_ms bigint) ON COMMIT DROP",
		"INSERT INTO pg_temp.epochs VALUES (1, '00000000-0000-4000-8000-000000000000', 'root', 0)",
		"CREATE TEMP TABLE operators (x int) ON COMMIT DROP", "CREATE TEMP TABLE signatures (x int) ON COMMIT DROP",
		"CREATE TEMP TABLE intents (action_key text, payload_sha256 text, status text) ON COMMIT DROP",
		"CREATE TEMP TABLE action_index (action_key text, answer text, stage text, deadline_ms bigint, payload_sha256 text, context_sha256 text) ON COMMIT DROP",
		fmt.Sprintf("INSERT INTO pg_temp.action_index VALUES ('run:shadow', 'x', 'executing', 9999999999999, '%s', '')", Payload{"run", "t", "b"}.Digest()),
		"CREATE TEMP TABLE permits (action_key text, permit_id text, agent text, issued_ms bigint, lease_ms bigint, db_role text) ON COMMIT DROP",
		"CREATE TEMP TABLE policy_evals (action_key text, mode text, ttl_ms bigint, rule_id bigint, pattern text, at_ms bigint, approvers bigint, explain text) ON COMMIT DROP",
		"CREATE TEMP TABLE approval_requests (action_key text, agent text, requested_ms bigint, expires_ms bigint) ON COMMIT DROP",
		"CREATE TEMP TABLE chain_head (one int, seq bigint, hash text) ON COMMIT DROP", "INSERT INTO pg_temp.chain_head VALUES (1, 0, 'x')",
		"CREATE TEMP TABLE events (seq bigint) ON COMMIT DROP", "CREATE TEMP TABLE payloads (action_key text) ON COMMIT DROP",
		`CREATE FUNCTION pg_temp.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint,
			OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
			LANGUAGE sql AS $$ SELECT 'auto'::text, NULL::bigint, 0::bigint, 1::bigint, '(shadow)'::text $$`,
		// Readable by the function's owner, were they ever looked up.
		"GRANT ALL ON pg_temp.policy_rules, pg_temp.policy_conditions, pg_temp.epochs, pg_temp.operators, pg_temp.signatures, pg_temp.intents, " +
			"pg_temp.action_index, pg_temp.permits, pg_temp.policy_evals, pg_temp.approval_requests, pg_temp.chain_head, pg_temp.events, pg_temp.payloads TO PUBLIC",
		"CREATE FUNCTION pg_temp.tollgate_pattern_matches(p text, k text) RETURNS boolean LANGUAGE sql AS $$ SELECT false $$",
		"CREATE FUNCTION pg_temp.sha256(bytea) RETURNS bytea LANGUAGE sql AS $$ SELECT '\\x00'::bytea $$",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	before := ledgerState(t, owner)
	if got := callFn(t, conn, ask); got.code != "" || got.path != "new" || got.mode != "approval" || got.permit != "" {
		t.Errorf("ask under shadowed rules: %+v", got)
	}
	run := honestFn("run:shadow", Payload{"run", "t", "b"}, "bot1")
	if got := callFn(t, conn, run); got.code != "" || got.path != "new" || got.mode != "auto" || got.permit != run.permit {
		t.Errorf("run under a shadowed index: %+v", got)
	}
	var mine int
	if err := conn.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM pg_temp.intents) + (SELECT count(*) FROM pg_temp.permits) + (SELECT count(*) FROM pg_temp.policy_evals)").Scan(&mine); err != nil || mine != 0 {
		t.Errorf("the function wrote %d rows into the agent's temporary tables (%v)", mine, err)
	}
	if err := conn.Commit(); err != nil {
		t.Fatal(err)
	}
	if after := ledgerState(t, owner); after == before {
		t.Error("the two guards stored nothing in the real tables")
	}
	if n := permitsOf(t, owner, "ask:shadow"); n != 0 {
		t.Errorf("ask:shadow: %d permits", n)
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackRaceOneKey: many connections of two agents'
// roles guard one new key at the same moment, each with a permit id of
// its own and half of them with another payload: exactly one call
// records the key and is issued its permit; every other is answered
// without a permit (from the projection, or left to the full path with
// nothing written), and the ledger verifies. A call whose bounded wait
// for the key's lock gave up (55P03) is tried again, as the client does.
func TestPostgresGuardAttackRaceOneKey(t *testing.T) {
	r := attackRoles(t)
	owner := rawDB(t, r.owner)
	const n = 12
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = rawDB(t, []string{r.bot1, r.bot2}[i%2])
		if err := conns[i].Ping(); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"run:race-same", "run:race-mixed"} {
		start := make(chan struct{})
		replies := make([]fnReply, n)
		calls := make([]fnCall, n)
		var wg sync.WaitGroup
		for i := range n {
			p := Payload{"run", "t", "b"}
			if key == "run:race-mixed" && i%3 == 0 {
				p.Body = "another body"
			}
			calls[i] = honestFn(key, p, fmt.Sprintf("bot%d", i%2+1))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// 55P03 is the key's bounded lock wait giving up (exit
				// 75, retry): on a loaded machine eleven waiters behind
				// a committing holder can outlast it, and the client
				// tries again, as here.
				for try := 0; ; try++ {
					replies[i] = callFn(t, conns[i].DB, calls[i])
					if replies[i].code != "55P03" || try == 20 {
						break
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		issued := 0
		for i, got := range replies {
			switch {
			case got.code != "":
				t.Errorf("%s call %d refused: %+v", key, i, got)
			case got.permit != "":
				issued++
				if got.path != "new" || got.permit != calls[i].permit {
					t.Errorf("%s call %d: %+v", key, i, got)
				}
			case got.path != "index" && got.path != "full":
				t.Errorf("%s call %d: %+v", key, i, got)
			}
		}
		var intents int
		if err := owner.QueryRow("SELECT count(*) FROM intents WHERE action_key = $1", key).Scan(&intents); err != nil {
			t.Fatal(err)
		}
		if issued != 1 || permitsOf(t, owner, key) != 1 || intents != 1 {
			t.Errorf("%s: %d calls issued a permit, %d permits and %d intents stored", key, issued, permitsOf(t, owner, key), intents)
		}
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackRacePolicyChange: while the operator turns the
// rule for "run" from auto to deny and back again and again, agents guard
// new "run" keys through the function. Every key's evaluation names the
// rule that was the newest for "run" at its place on the chain (the
// commit order): no guard read a rule that a change committed before its
// own commit had replaced, and no permit follows a deny rule.
func TestPostgresGuardAttackRacePolicyChange(t *testing.T) {
	r := attackRoles(t)
	owner := rawDB(t, r.owner)
	conns := []*rawConn{rawDB(t, r.bot1), rawDB(t, r.bot2)}
	changing, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; changing.Err() == nil; i++ {
			mode := []approvals.Mode{approvals.Deny, approvals.Auto}[i%2]
			if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: mode}, "root"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var guards sync.WaitGroup
	for c, conn := range conns {
		guards.Add(1)
		go func() {
			defer guards.Done()
			for i := range 40 {
				got := callFn(t, conn.DB, honestFn(fmt.Sprintf("run:policy-race-%d-%d", c, i), Payload{"run", "t", "b"}, fmt.Sprintf("bot%d", c+1)))
				if got.code != "" || got.path != "new" {
					t.Errorf("guard %d-%d: %+v", c, i, got)
				}
			}
		}()
	}
	guards.Wait()
	stop()
	wg.Wait()
	// An agent's events wait, pending, for a writer that is not an
	// agent's role (schema 39): the guards after the last rule change
	// are sealed here, as an operator's next write would seal them.
	if _, err := owner.Exec("SELECT tollgate_seal(NULL, 0)"); err != nil {
		t.Fatal(err)
	}
	rows, err := owner.Query(`SELECT e.type, e.action_key, e.detail, coalesce(p.rule_id, 0), coalesce(p.mode, ''),
		(SELECT count(*) FROM permits x WHERE x.action_key = e.action_key)
		FROM events e LEFT JOIN policy_evals p ON e.type = 'policy_evaluated' AND p.action_key = e.action_key
		WHERE e.type IN ('policy_set', 'policy_evaluated') ORDER BY e.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var newest, modeOf = map[string]int64{}, map[int64]string{}
	evaluated := 0
	for rows.Next() {
		var typ, key, detail, mode string
		var rule, permits int64
		if err := rows.Scan(&typ, &key, &detail, &rule, &mode, &permits); err != nil {
			t.Fatal(err)
		}
		if typ == "policy_set" {
			var d struct {
				RuleID  int64  `json:"rule_id"`
				Pattern string `json:"pattern"`
				Mode    string `json:"mode"`
			}
			if err := json.Unmarshal([]byte(detail), &d); err != nil {
				t.Fatal(err)
			}
			newest[d.Pattern], modeOf[d.RuleID] = d.RuleID, d.Mode
			continue
		}
		if !strings.HasPrefix(key, "run:policy-race-") {
			continue
		}
		evaluated++
		if rule != newest["run"] || mode != modeOf[rule] || (permits == 1) != (mode == "auto") || permits > 1 {
			t.Errorf("%s: evaluated under rule %d (%s) with %d permits; the newest rule for run at its place on the chain is %d (%s)",
				key, rule, mode, permits, newest["run"], modeOf[newest["run"]])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if evaluated != 80 || len(modeOf) < 4 {
		t.Fatalf("%d keys evaluated among %d rule changes: the race did not happen", evaluated, len(modeOf))
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackInsideAgentTransaction: an agent calls the
// function inside a transaction it opened. Rolled back, the call leaves
// nothing. With the owner's copy mark, an unbounded clock skew and a
// target of its choosing set for the transaction, a kind under a deny
// rule is still denied and a kind under an approval rule still gets a
// request, never a permit. A second call for its key in the same
// transaction, with another permit id, is not told the first call's
// permit is its own.
func TestPostgresGuardAttackInsideAgentTransaction(t *testing.T) {
	r := attackRoles(t)
	if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "stop", Mode: approvals.Deny}, "root"); err != nil {
		t.Fatal(err)
	}
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	before := ledgerState(t, owner)
	tx, err := raw.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := callFn(t, tx, honestFn("run:rolled-back", Payload{"run", "t", "b"}, "bot1")); got.code != "" || got.permit == "" {
		t.Fatalf("run in a transaction: %+v", got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if after := ledgerState(t, owner); after != before {
		t.Fatalf("a rolled-back call changed the ledger: %s, was %s", after, before)
	}
	tx, err = raw.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{"SET LOCAL tollgate.copying = 'on'", "SET LOCAL tollgate.clock_skew_ms = '-1'", "SET LOCAL tollgate.target = 'anything'"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct {
		key, kind, mode string
		redact          bool
	}{{"stop:tx", "stop", "deny", false}, {"ask:tx", "ask", "approval", false}, {"stop:tx-redacted", "stop", "deny", true}} {
		call := honestFn(c.key, Payload{c.kind, "t", "b"}, "bot1")
		if c.redact {
			// The text goes as the honest client sends it for a redacted
			// row (schema 41), bound to the digests, never stored.
			if _, err := tx.ExecContext(ctx, "SELECT set_config('tollgate.redacted_text', $1, true)", call.canonical); err != nil {
				t.Fatal(err)
			}
			call.canonical = nil
		}
		if got := callFn(t, tx, call); got.code != "" || got.path != "new" || got.mode != c.mode || got.permit != "" {
			t.Errorf("%s with the copy mark set: %+v", c.key, got)
		}
	}
	first := honestFn("run:held", Payload{"run", "t", "b"}, "bot1")
	if got := callFn(t, tx, first); got.permit != first.permit {
		t.Fatalf("run:held: %+v", got)
	}
	again := first
	again.permit = newUUID()
	if got := callFn(t, tx, again); got.code != "" || got.path == "own" || got.permit != "" {
		t.Errorf("a second call in the transaction with another permit id: %+v", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stop:tx", "ask:tx", "stop:tx-redacted"} {
		if n := permitsOf(t, owner, k); n != 0 {
			t.Errorf("%s: %d permits", k, n)
		}
	}
	if n := permitsOf(t, owner, "run:held"); n != 1 {
		t.Errorf("run:held: %d permits", n)
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackFallsBack: where the database's call cannot
// decide as the client's path would, it writes nothing and leaves the
// guard to the full path, whatever the agent sends: a kind a rule with a
// condition covers (even by a glob, even when an unconditional rule for
// the exact kind would permit), a key of an epoch that is not the active
// one (an older one, a well-formed one never activated, no epoch while
// one is active), and a key already recorded by another agent under
// another payload (a conflict, which the full path logs). A deny rule
// gives a denial and no permit.
func TestPostgresGuardAttackFallsBack(t *testing.T) {
	r := attackRoles(t)
	for _, rule := range []approvals.Rule{
		{Pattern: "pay", Mode: approvals.Auto},
		{Pattern: "p*", Mode: approvals.Auto, Condition: "context.amount <= 50", Priority: 1},
		{Pattern: "stop", Mode: approvals.Deny},
	} {
		if _, err := r.admin.SetPolicy(ctx, rule, "root"); err != nil {
			t.Fatal(err)
		}
	}
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot2)
	bot1 := openAt(t, r.bot1)
	if _, err := bot1.Guard(ctx, "run:theirs", Payload{"run", "t", "theirs"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	before := ledgerState(t, owner)
	full := func(what string, c fnCall) {
		t.Helper()
		if got := callFn(t, raw.DB, c); got.code != "" || got.path != "full" || got.permit != "" {
			t.Errorf("%s: %+v", what, got)
		}
	}
	full("a kind under a conditioned glob", honestFn("pay:cond", Payload{"pay", "t", "b"}, "bot2"))
	full("another agent's key with another payload", honestFn("run:theirs", Payload{"run", "t", "mine"}, "bot2"))
	full("a well-formed epoch never activated", honestFn("hsr1:"+newUUID()+":run-x", Payload{"run", "t", "b"}, "bot2"))
	if after := ledgerState(t, owner); after != before {
		t.Fatalf("the calls left to the full path wrote: %s, was %s", after, before)
	}
	e1, err := r.admin.ActivateEpoch(ctx, "", "root")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.admin.ActivateEpoch(ctx, "", "root"); err != nil {
		t.Fatal(err)
	}
	before = ledgerState(t, owner)
	full("a key of an older epoch", honestFn("hsr1:"+e1.Epoch+":run-old", Payload{"run", "t", "b"}, "bot2"))
	full("a key of no epoch while one is active", honestFn("run:no-epoch", Payload{"run", "t", "b"}, "bot2"))
	if after := ledgerState(t, owner); after != before {
		t.Fatalf("the calls left to the full path wrote: %s, was %s", after, before)
	}
	act, err := r.admin.Epoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deny := honestFn("hsr1:"+act.Epoch+":stop-1", Payload{"stop", "t", "b"}, "bot2")
	if got := callFn(t, raw.DB, deny); got.code != "" || got.path != "new" || got.mode != "deny" || got.permit != "" {
		t.Errorf("a kind under a deny rule: %+v", got)
	}
	if n := permitsOf(t, owner, deny.key.(string)); n != 0 {
		t.Errorf("a denied key has %d permits", n)
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackHostileArguments: arguments the function's
// checks refuse before anything is locked or written, beyond those of
// TestPostgresGuardFunctionGivesNothingNotGiven: each argument NULL, a
// logical key of 81 characters, an epoch in upper case, a digest in
// upper case, a canonical text that is not JSON or not an object, a lease
// a millisecond outside either bound, a context whose text is not JSON
// though its digest is right. Each is refused (or, where NULL means a
// redacted payload or "not a retry", stored as the honest call would
// be), with nothing stored by a refusal.
func TestPostgresGuardAttackHostileArguments(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	p := Payload{"run", "t", "b"}
	before := ledgerState(t, owner)
	refused := map[string]func(*fnCall){
		"an 81-character logical key": func(c *fnCall) { c.key = strings.Repeat("a", 81) },
		"an epoch in upper case":      func(c *fnCall) { c.key = "hsr1:" + strings.ToUpper(newUUID()) + ":run-1" },
		"a digest in upper case":      func(c *fnCall) { c.sha = strings.ToUpper(c.sha.(string)) },
		"a canonical text that is not JSON": func(c *fnCall) {
			c.canonical = `{"body":"b","kind":"run","target":"t"`
			c.sha = sha256Hex([]byte(c.canonical.(string)))
		},
		"a canonical text that is a string": func(c *fnCall) {
			c.canonical = `"{\"body\":\"b\",\"kind\":\"run\",\"target\":\"t\"}"`
			c.sha = sha256Hex([]byte(c.canonical.(string)))
		},
		"a body that is not a string": func(c *fnCall) {
			c.canonical = `{"body":["b"],"kind":"run","target":"t"}`
			c.sha = sha256Hex([]byte(c.canonical.(string)))
		},
		"a lease of 999 ms":               func(c *fnCall) { c.lease = int64(999) },
		"a lease of 7 days and 1 ms":      func(c *fnCall) { c.lease = int64(604800001) },
		"a context that is not JSON":      func(c *fnCall) { c.ctxText, c.ctxSHA = "amount=1", sha256Hex([]byte("amount=1")) },
		"a context that is not an object": func(c *fnCall) { c.ctxText, c.ctxSHA = "[1]", sha256Hex([]byte("[1]")) },
	}
	args := []string{"key", "sha", "kind", "target", "bodySHA", "agent", "ctxSHA", "ctxText", "lease", "permit"}
	for i, a := range args {
		refused["a NULL "+a] = func(c *fnCall) {
			ptrs := []*any{&c.key, &c.sha, &c.kind, &c.target, &c.bodySHA, &c.agent, &c.ctxSHA, &c.ctxText, &c.lease, &c.permit}
			*ptrs[i] = nil
		}
	}
	for what, change := range refused {
		c := honestFn("run:hostile", p, "bot1")
		change(&c)
		if got := callFn(t, raw.DB, c); got.code == "" && got.path != "full" {
			t.Errorf("%s: %+v", what, got)
		}
	}
	if after := ledgerState(t, owner); after != before {
		t.Fatalf("the refused calls changed the ledger: %s, was %s", after, before)
	}
	// NULL where NULL has a meaning: no retry flag, no lock bound.
	c := honestFn("run:nulls", p, "bot1")
	c.retry, c.wait = nil, nil
	if got := callFn(t, raw.DB, c); got.code != "" || got.permit != c.permit {
		t.Errorf("NULL retry and wait: %+v", got)
	}
	// A retry flag on a new key changes nothing it decides.
	c = honestFn("ask:retry", Payload{"ask", "t", "b"}, "bot1")
	c.retry = true
	if got := callFn(t, raw.DB, c); got.code != "" || got.mode != "approval" || got.permit != "" {
		t.Errorf("a retry flag on a new key: %+v", got)
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackSignedLedgerFallsBack: on a signed ledger the
// function decides nothing, whatever the agent sends: before the rule for
// "run" is signed (the unsigned rule set before the first operator is
// not policy) and after, its call is left to the full path with nothing
// written, where the client proves the rule's signature; the honest
// guard there is permitted under the signed rule.
func TestPostgresGuardAttackSignedLedgerFallsBack(t *testing.T) {
	r := attackRoles(t)
	key := newSigner(t)
	signed, err := Open(ctx, r.owner, Options{Signers: []ssh.Signer{key}, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer signed.Close()
	if _, err := signed.AddOperator(ctx, "alice", opkeys.Line(key.PublicKey())); err != nil {
		t.Fatal(err)
	}
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	p := Payload{"run", "t", "b"}
	for i, sign := range []bool{false, true} {
		if sign {
			if _, err := signed.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "alice"); err != nil {
				t.Fatal(err)
			}
		}
		before := ledgerState(t, owner)
		c := honestFn(fmt.Sprintf("run:signed-%d", i), p, "bot1")
		if got := callFn(t, raw.DB, c); got.code != "" || got.path != "full" || got.permit != "" {
			t.Errorf("signed ledger, rule signed %v: %+v", sign, got)
		}
		if after := ledgerState(t, owner); after != before {
			t.Errorf("signed ledger, rule signed %v: the call wrote: %s, was %s", sign, after, before)
		}
	}
	a, err := openAt(t, r.bot1).Guard(ctx, "run:signed-1", p, GuardOptions{Agent: "bot1"})
	if err != nil || a.Verdict != Permitted {
		t.Fatalf("the honest guard under the signed rule: %+v %v", a, err)
	}
	verifyOK(t, signed)
}

// TestPostgresGuardAttackRaceEpochActivation: while the operator
// activates epoch after epoch, agents read the active epoch and guard a
// new key under it through the function as fast as they can, so that
// many calls arrive while an activation is under way. Every permit on
// the chain is for a key of the epoch newest at its place (the commit
// order): none was issued to a key an activation committed before it
// had fenced; the calls that lost the race were left to the full path
// with nothing written.
func TestPostgresGuardAttackRaceEpochActivation(t *testing.T) {
	r := attackRoles(t)
	owner := rawDB(t, r.owner)
	if _, err := r.admin.ActivateEpoch(ctx, "", "root"); err != nil {
		t.Fatal(err)
	}
	activating, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for activating.Err() == nil {
			if _, err := r.admin.ActivateEpoch(ctx, "", "root"); err != nil {
				t.Error(err)
				return
			}
			// Room between activations for some guards to read an epoch
			// and land under it: back to back (a loaded CI machine), every
			// guard met a newer epoch and the race had no permit to judge.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var guards sync.WaitGroup
	for c, u := range []string{r.bot1, r.bot2} {
		conn := rawDB(t, u)
		guards.Add(1)
		go func() {
			defer guards.Done()
			// Until this agent has 10 permits' worth of new keys, or 600
			// tries.
			for i, fresh := 0, 0; i < 600 && fresh < 10; i++ {
				var epoch string
				if err := conn.QueryRow("SELECT epoch FROM epochs ORDER BY seq DESC LIMIT 1").Scan(&epoch); err != nil {
					t.Error(err)
					return
				}
				got := callFn(t, conn.DB, honestFn(fmt.Sprintf("hsr1:%s:run-%d-%d", epoch, c, i), Payload{"run", "t", "b"}, fmt.Sprintf("bot%d", c+1)))
				if got.code != "" || (got.path != "new" && got.path != "full") {
					t.Errorf("guard %d-%d: %+v", c, i, got)
				}
				if got.path == "new" {
					fresh++
				}
			}
		}()
	}
	guards.Wait()
	stop()
	wg.Wait()
	rows, err := owner.Query("SELECT type, action_key, detail FROM events WHERE type IN ('epoch_activated', 'permit_issued') ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	active, permits, activations := "", 0, 0
	for rows.Next() {
		var typ, key, detail string
		if err := rows.Scan(&typ, &key, &detail); err != nil {
			t.Fatal(err)
		}
		if typ == "epoch_activated" {
			var d struct{ Epoch string }
			if err := json.Unmarshal([]byte(detail), &d); err != nil {
				t.Fatal(err)
			}
			active = d.Epoch
			activations++
			continue
		}
		permits++
		if !strings.HasPrefix(key, "hsr1:"+active+":") {
			t.Errorf("a permit for %s while epoch %s was active", key, active)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if permits == 0 || activations < 3 {
		t.Fatalf("%d permits among %d activations: the race did not happen", permits, activations)
	}
	t.Logf("%d permits among %d activations", permits, activations)
	verifyOK(t, r.admin)
}

// TestPostgresGuardAttackSameRulesAsClient: the database's decision in
// tollgate_guard is the client's (approvals.Decide, through PolicyTest)
// for every kind, over rule sets built one random rule at a time: exact
// kinds and globs, priorities, LIKE's own wildcards (% _ \) and
// multi-byte characters in patterns and kinds, auto, deny and approval
// rules with quorums and TTLs. A kind the client would send for approval
// is never permitted by the function: mode, rule, TTL and quorum agree.
func TestPostgresGuardAttackSameRulesAsClient(t *testing.T) {
	r := attackRoles(t)
	raw := rawDB(t, r.bot1)
	patterns := []string{"a", "ab", "a*", "*b", "?", "a?b", "*", "a_b", "a%b", "a_*", "%*", "*%b", `a\*`, "é*", "é?", "?é", "*.*", "a.*", "x"}
	kinds := []string{"a", "ab", "axb", "a_b", "a%b", `a\x`, `a\*`, "é", "éa", "aé", "a.b", "b", "x", "xx", "a.", "é.é"}
	rng := rand.New(rand.NewPCG(14, 25))
	seq := 0
	for round := range 24 {
		rule := approvals.Rule{Pattern: patterns[rng.IntN(len(patterns))], Priority: rng.IntN(3) - 1,
			Mode: []approvals.Mode{approvals.Auto, approvals.Deny, approvals.Approval}[rng.IntN(3)]}
		if rule.Mode == approvals.Approval {
			rule.TTL, rule.Approvers = time.Duration(1+rng.IntN(48))*time.Hour, 1+rng.IntN(3)
		}
		if _, err := r.admin.SetPolicy(ctx, rule, "root"); err != nil {
			t.Fatal(err)
		}
		for _, kind := range kinds {
			want, _, err := r.admin.PolicyTest(ctx, approvals.Facts{Kind: kind, Target: "t", Agent: "bot1"})
			if err != nil {
				t.Fatal(err)
			}
			seq++
			c := honestFn(fmt.Sprintf("k:same-%d", seq), Payload{kind, "t", "b"}, "bot1")
			var path, mode string
			var rule, ttl, approvers sql.NullInt64
			var permit sql.NullString
			if err := raw.QueryRow(`SELECT o_path, o_mode, o_rule, o_ttl_ms, o_approvers, o_permit_id FROM tollgate_guard($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, false, 0)`,
				c.key, c.sha, c.canonical, c.kind, c.target, c.bodySHA, c.agent, c.ctxSHA, c.ctxText, c.lease, c.permit).Scan(&path, &mode, &rule, &ttl, &approvers, &permit); err != nil {
				t.Fatalf("round %d kind %q: %v", round, kind, err)
			}
			if path != "new" || mode != string(want.Mode) || rule.Int64 != want.ID || ttl.Int64 != want.TTL.Milliseconds() ||
				approvers.Int64 != int64(want.Approvers) || permit.Valid != (want.Mode == approvals.Auto) {
				t.Errorf("round %d kind %q: the function decided %s %s rule %d ttl %d quorum %d permit %v; the client %s rule %d (%s) ttl %d quorum %d",
					round, kind, path, mode, rule.Int64, ttl.Int64, approvers.Int64, permit.Valid, want.Mode, want.ID, want.Pattern, want.TTL.Milliseconds(), want.Approvers)
			}
		}
	}
	verifyOK(t, r.admin)
}
