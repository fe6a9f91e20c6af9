package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The attacks in this file succeeded when the attacking helper wrote
// them: each test asserts what the ledger should do. The holes that
// schemas 15, 17, 20 and 23 closed run always (schema 23's, an agent
// holding the ledger-wide lock, is in ledgergate_test.go). The last hole
// that skipped unless TOLLGATE_SHOW_HOLES was set (an agent holding
// another role's key) was closed by schema 29, and showHole with it.

// TestPostgresGuardHoleAgentAppendsEvents: tollgate_append_events and
// tollgate_append_event (schema 13 and 8) are granted to tollgate_agent
// and append whatever events they are given. An agent's role appends an
// "approved" event by "alice" for another agent's key, committing a
// decisions row that does not exist: the chain is append-only, so from
// then on verify fails for ever (the event names a missing row), and the
// timeline and export show an approval no operator made. The same
// follows from any fact row an insert function stores with no event
// (here a conflict logged against another agent's key): verify names it
// for ever. The append should refuse an event whose fact row is not one
// its own transaction wrote with that hash, and a deferred constraint
// trigger should refuse a fact row no event of its transaction commits.
func TestPostgresGuardHoleAgentAppendsEvents(t *testing.T) {
	r := attackRoles(t)
	bot1, raw2 := openAt(t, r.bot1), rawDB(t, r.bot2)
	if _, err := bot1.Guard(ctx, "ask:victim", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, r.admin)
	owner := rawDB(t, r.owner)
	before := ledgerState(t, owner)
	for _, q := range []string{
		`SELECT * FROM tollgate_append_events(ARRAY['ask:victim'], ARRAY['approved'], ARRAY['alice'], ARRAY['{"reason":"ok"}'],
			ARRAY[(extract(epoch FROM now()) * 1000)::bigint], ARRAY['decisions'], ARRAY['ask:victim'], ARRAY[repeat('a', 64)])`,
		`SELECT * FROM tollgate_append_event('ask:victim', 'approved', 'alice', '{"reason":"ok"}',
			(extract(epoch FROM now()) * 1000)::bigint, 'decisions', 'ask:victim', repeat('a', 64))`,
		`SELECT id FROM tollgate_insert_conflicts(ARRAY['action_key', 'stored_sha256', 'attempted_sha256', 'attempted', 'redacted', 'differs', 'agent', 'at_ms'],
			ARRAY['ask:victim', repeat('a', 64), repeat('b', 64), NULL, '1', 'body', 'bot2', '1'])`,
	} {
		if _, err := raw2.DB.Exec(q); err == nil {
			t.Errorf("an agent's role stored a forged event or fact: %.60s...", strings.TrimSpace(q))
		}
	}
	if after := ledgerState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Errorf("verify fails after the agent's append: %+v %v", rep, err)
	}
}

// TestPostgresAgentCannotFreezeGuardsThroughFunctions: the two ways
// through tollgate's own functions that schema 20 closed. tollgate_lock_head
// (the ledger-wide lock alone) is refused to an agent's role; and an agent
// that holds the lock shared in a transaction it leaves open (a guard's
// call, which holds it to its commit) while an operator's rule change
// waits for it alone no longer makes every later guard wait behind the
// change: the change gives up its wait after half a second, names the
// holder and tries again, and another agent's guard, bounded at one
// second, is permitted meanwhile. Without schema 20 both fail.
func TestPostgresAgentCannotFreezeGuardsThroughFunctions(t *testing.T) {
	r := attackRoles(t)
	raw1 := rawDB(t, r.bot1)
	var opErr error
	guardsFlow(t, r, map[string]func() func(){
		"tollgate_lock_head": func() func() {
			tx, err := raw1.DB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "SELECT tollgate_lock_head()"); err != nil {
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "42501" {
					t.Errorf("tollgate_lock_head as an agent's role: %v, want permission denied", err)
				}
				tx.Rollback()
				return func() {}
			}
			t.Error("an agent's role took the ledger-wide lock alone with tollgate_lock_head")
			return func() { tx.Rollback() }
		},
		// The function itself, granted to every agent: its shared lock,
		// held by a transaction the agent leaves open, holds back an
		// operator's change.
		"tollgate_guard with an operator's change waiting": func() func() {
			tx, err := raw1.DB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := callFn(t, tx, honestFn("run:held-open", Payload{"run", "t", "b"}, "bot1")); got.code != "" {
				tx.Rollback()
				t.Fatalf("bot1's guard in its open transaction: %+v", got)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				sctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
				defer cancel()
				_, opErr = r.admin.SetPolicy(sctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
			}()
			time.Sleep(300 * time.Millisecond)
			return func() { <-done; tx.Rollback() }
		},
	})
	t.Logf("the operator's change: %v", opErr)
	if opErr == nil || !strings.Contains(opErr.Error(), "the ledger-wide lock is held by") {
		t.Errorf("the operator's change while an agent held the lock: %v, want it to name the holder", opErr)
	}
}

// guardsFlow runs, for each way an attacker (bot1) holds the ledger-wide
// lock, another agent's (bot2's) honest guard of a new key bounded at one
// second, and fails the test unless it is permitted.
func guardsFlow(t *testing.T, r pgRoles, holds map[string]func() func()) {
	t.Helper()
	raw2 := rawDB(t, r.bot2)
	n := 0
	for how, hold := range holds {
		n++
		release := hold()
		c := honestFn(fmt.Sprintf("run:frozen-%d", n), Payload{"run", "t", "b"}, "bot2")
		c.wait = int64(1000)
		got := callFn(t, raw2.DB, c)
		release()
		if got.code != "" || got.permit == "" {
			t.Errorf("with bot1 holding %s, bot2's honest guard: %+v", how, got)
		}
	}
}

// TestPostgresGuardHolePayloadNotCanonical: the function checks that the
// canonical text hashes to its digest and that PostgreSQL's JSON parser
// reads from it the kind, target and body digest sent, not that it is
// the canonical form (SPEC 2) nor that each field is at most 4000 code
// points. An agent stores, under a permit, a text with a duplicate field
// (jsonb keeps the last "kind", tollgate's own strict decoder refuses
// the text, so show --payload and the console call the body "not
// retained (recorded outside tollgate)" though it is), a text with
// spaces and escapes (its digest is not the digest of its payload, so the
// honest client's retry of the same payload is a conflict), a target
// that is a JSON object (->> reads it as text, which the caller sends as
// the target; the client refuses any field but a string), a kind of
// 20000 characters, which the client refuses at input, and a context the
// client would refuse or write otherwise (a nested object, a duplicate
// field, spaces; 200 kB is refused by the table's bound).
func TestPostgresGuardHolePayloadNotCanonical(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	big := strings.Repeat("k", 20000)
	texts := map[string]struct{ text, kind string }{
		"run:dup-field":  {`{"body":"b","kind":"ask","kind":"run","target":"t"}`, "run"},
		"run:spaced":     {`{ "target" : "t", "kind" : "\u0072un", "body" : "b" }`, "run"},
		"run:over-bound": {`{"body":"b","kind":"` + big + `","target":"t"}`, big},
		"run:not-string": {`{"body":"b","kind":"run","target":{"t": 1}}`, "run"},
	}
	before := ledgerState(t, owner)
	for key, x := range texts {
		target := "t"
		if key == "run:not-string" {
			target = `{"t": 1}` // what jsonb's ->> makes of the object
		}
		c := fnCall{key: key, sha: sha256Hex([]byte(x.text)), canonical: x.text, kind: x.kind, target: target, bodySHA: sha256Hex([]byte("b")),
			agent: "bot1", ctxSHA: "", ctxText: "", lease: int64(60000), permit: newUUID(), retry: false, wait: int64(0)}
		if got := callFn(t, raw.DB, c); got.code == "" {
			t.Errorf("%s: stored %s under %+v", key, strings.ReplaceAll(x.text, big, "k..."), got)
		}
	}
	// A context the client would refuse (SPEC 10: bounded; each value a
	// number, string, boolean or list of strings) or write otherwise.
	for i, text := range []string{`{"a":{"b":1}}`, `{"a":1,"a":2}`, `{ "a" : 1 }`, `{"a":"` + strings.Repeat("x", 200000) + `"}`} {
		c := honestFn("run:context-"+string(rune('a'+i)), Payload{"run", "t", "b"}, "bot1")
		c.ctxText, c.ctxSHA = text, sha256Hex([]byte(text))
		if got := callFn(t, raw.DB, c); got.code == "" {
			t.Errorf("context %.40s: stored under %+v", text, got)
		}
	}
	if after := ledgerState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	if d, err := r.admin.Status(ctx, "run:dup-field"); err == nil && d.Retained && d.Payload == nil {
		t.Errorf("run:dup-field: its retained body is shown to the operator as not retained")
	}
}

// TestPostgresGuardHoleAgentNameUnchecked: the client refuses an agent
// name with a control or format character (SPEC 4, approvals.CheckName);
// the function takes any name up to 256 characters, so an agent's role
// records under a permit a name with a terminal escape and a zero-width
// space, which other tools then compare and show.
func TestPostgresGuardHoleAgentNameUnchecked(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	before := ledgerState(t, owner)
	for i, name := range []string{"bot1\x1b[2J", "bo\u200bt1", "bot1\u202e"} {
		if err := checkName("agent", name); err == nil {
			t.Fatalf("the client takes %q", name)
		}
		c := honestFn("run:name-"+string(rune('a'+i)), Payload{"run", "t", "b"}, name)
		if got := callFn(t, raw.DB, c); got.code == "" {
			t.Errorf("agent name %q: stored under %+v", name, got)
		}
	}
	if after := ledgerState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
}

// TestPostgresGuardHoleRawPayloadKindMismatch: tollgate_guard refuses a
// canonical text whose kind is not the row's, but the path it leaves
// every other guard to does not: tollgate_insert_payloads (schema 10),
// granted to tollgate_agent, stores any canonical text beside any kind
// column, and the policy trigger (schema 11, tollgate_check_policy_eval)
// decides on the kind column. An agent's role records a payload whose
// digest-bound text is an action of kind "stop" (a deny rule) under the
// kind column "run" (auto), has it evaluated "auto" and is issued a
// permit: the action it holds a permit for is one the rules deny.
// verify names the row afterwards; the permit was issued.
func TestPostgresGuardHoleRawPayloadKindMismatch(t *testing.T) {
	r := attackRoles(t)
	if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "stop", Mode: approvals.Deny}, "root"); err != nil {
		t.Fatal(err)
	}
	run, err := r.admin.Policies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var runRule int64
	for _, x := range run {
		if x.Pattern == "run" {
			runRule = x.ID
		}
	}
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	denied := Payload{"stop", "t", "b"}
	key, now := "mis:1", time.Now().UnixMilli()
	// The owner's intent (schema 40 refuses any other role's without its
	// payload): what is attacked is the rows that follow it.
	if _, err := owner.DB.Exec("SELECT tollgate_record_intent($1, $2)", key, denied.Digest()); err != nil {
		t.Fatal(err)
	}
	codes := []string{
		forge(t, raw, "payloads", map[string]any{"action_key": key, "payload_sha256": denied.Digest(), "canonical": string(denied.Canonical()),
			"redacted": 0, "kind": "run", "kind_sha256": sha256Hex([]byte("run")), "target_sha256": sha256Hex([]byte("t")),
			"body_sha256": sha256Hex([]byte("b")), "agent": "bot1", "recorded_ms": now, "context_sha256": "", "context": ""}),
		forge(t, raw, "policy_evals", map[string]any{"action_key": key, "mode": "auto", "ttl_ms": 0, "rule_id": runRule, "pattern": "run",
			"at_ms": now, "approvers": 1, "explain": ""}),
		forge(t, raw, "permits", map[string]any{"action_key": key, "permit_id": newUUID(), "agent": "bot1", "issued_ms": now, "lease_ms": now + 60000}),
	}
	if n := permitsOf(t, owner, key); n != 0 || codes[0] == "" {
		t.Errorf("a payload of kind stop stored as kind run (refusals %q) and given %d permits", codes, n)
	}
}

// TestPostgresGuardNulBodyTakesTheFullPath: a payload may hold U+0000
// (SPEC 2 writes it \u0000 in the canonical text), and the client's own
// path permits such a payload; tollgate_guard cast the canonical text to
// jsonb, which refuses \u0000 (22P05), so the one call failed and an
// honest guard of such a payload failed on PostgreSQL. The function now
// leaves it to the full path.
func TestPostgresGuardNulBodyTakesTheFullPath(t *testing.T) {
	r := attackRoles(t)
	bot := openAt(t, r.bot1)
	if _, ok := bot.serverGuard(bot.grantInputs()); !ok {
		t.Fatal("the agent's store does not guard through the database's call")
	}
	a, err := bot.Guard(ctx, "run:nul", Payload{"run", "t", "a\x00b"}, GuardOptions{Agent: "bot1"})
	if err != nil || a.Verdict != Permitted {
		t.Errorf("a body holding U+0000: %+v %v", a.Verdict, err)
	}
}

// TestPostgresGuardHoleApprovedPermitTaken: an operator approves bot1's
// request; bot2's role, which cannot read bot1's body but knows or
// guesses it (its digests are visible to every role, so a guess is
// checked offline), guards bot1's key with that payload first and is
// issued the permit; bot1, whose request it was, is told to wait for a
// lease it does not hold. tollgate_guard leaves an approved key to the
// full path, and there nothing binds the permit to the role that made
// the request: tollgate_check_permit (0011) checks the approval, not who
// asks. It should refuse a permit under an approval to any role but the
// one that recorded the payload (payloads.db_role) or an operator.
func TestPostgresGuardHoleApprovedPermitTaken(t *testing.T) {
	r := attackRoles(t)
	bot1, bot2, alice := openAt(t, r.bot1), openAt(t, r.bot2), openAt(t, r.alice)
	p := Payload{"ask", "t", "b"}
	if a, err := bot1.Guard(ctx, "ask:taken", p, GuardOptions{Agent: "bot1"}); err != nil || a.State != StatePending {
		t.Fatalf("bot1's request: %+v %v", a, err)
	}
	if _, err := alice.Approve(ctx, "ask:taken", "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	a, err := bot2.Guard(ctx, "ask:taken", p, GuardOptions{Agent: "bot2"})
	// From schema 29 the client's path refuses it sooner (ErrOthersKey):
	// bot2's transaction does not lock bot1's key, so it writes no permit.
	if err == nil && a.Verdict == Permitted {
		t.Errorf("bot2 was issued the permit of bot1's approved request (%s)", a.PermitID)
	} else if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "only it or an operator takes its permit") && !errors.Is(err, ErrOthersKey) {
		t.Errorf("bot2's guard should be refused by the rule that binds the permit to the requester: %+v %v", a.Verdict, err)
	}
	if a, err := bot1.Guard(ctx, "ask:taken", p, GuardOptions{Agent: "bot1"}); err != nil || a.Verdict != Permitted {
		t.Errorf("bot1, whose request was approved: %+v %v", a.Verdict, err)
	}
}
