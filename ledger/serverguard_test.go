package ledger

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

// clientPath is a PostgreSQL engine without its one-call guard and
// record: the store on it guards and records through the state
// machine's own key transactions.
type clientPath struct{ *postgres.Engine }

// ServerGuard declines, so that the state machine takes its own path.
func (clientPath) ServerGuard(context.Context, engine.GuardCall) (engine.GuardReply, bool, error) {
	return engine.GuardReply{}, false, nil
}

// ServerRecord declines too: a record takes the state machine's path.
func (clientPath) ServerRecord(context.Context, engine.GuardCall) (engine.GuardReply, bool, error) {
	return engine.GuardReply{}, false, nil
}

// sameShape blanks what differs between two guards of one payload under
// two keys at two moments: the key, the permit's id and the times.
func sameShape(a Answer) Answer {
	a.Key, a.Logical = "", ""
	a.PermitID = strings.Repeat("x", min(len(a.PermitID), 1))
	a.LeaseUntil, a.ExpiresAt = time.Time{}.Add(time.Duration(boolInt(!a.LeaseUntil.IsZero()))), time.Time{}.Add(time.Duration(boolInt(!a.ExpiresAt.IsZero())))
	return a
}

// functionAndClient opens a new ledger (its URL first) twice: fn takes
// the database's one-call functions, its round trips counted by wire;
// client the state machine's own key transactions (clientPath). Both are
// closed when the test ends.
func functionAndClient(t *testing.T) (u string, fn, client *Store, wire *wireCounter) {
	t.Helper()
	u = pgtest.DB(t)
	wire = &wireCounter{}
	eng, err := postgres.Open(ctx, u, postgres.Options{After: afterMigration(time.Now, postgres.Rebind), Tracer: wire})
	if err != nil {
		t.Fatal(err)
	}
	if fn, err = New(ctx, eng, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close() })
	eng2, err := postgres.Open(ctx, u, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if client, err = New(ctx, clientPath{eng2}, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return u, fn, client, wire
}

// TestPostgresGuardFunctionWritesAsTheClient: a guard answered by the
// database's one call (schema 14) writes the facts and events a guard
// through the state machine's own transactions writes, event for event
// (types, actors, details but for the permit's id and the times, the
// fact each commits), for an auto, an approval (quorum 2), a deny and the
// default rule, a redacted payload, a context, and a kind whose text JSON
// escapes differently in Go and in PostgreSQL; its answers, first and
// retried, are the client path's; each is one round trip; and verify and
// export prove every row it wrote. A guard that carries an attempt id
// (schema 101) is one round trip too, first and retried, and writes the
// attempt's row and event as the client's key transaction does.
func TestPostgresGuardFunctionWritesAsTheClient(t *testing.T) {
	_, fn, client, wire := functionAndClient(t)
	weird := "w<&>\u2028\u2029\b\f\x01\x7f\"\\é/"
	for _, r := range []approvals.Rule{{Pattern: "run", Mode: approvals.Auto}, {Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2},
		{Pattern: "stop", Mode: approvals.Deny}, {Pattern: "w*", Mode: approvals.Auto}} {
		if _, err := fn.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fn.Guard(ctx, "run:warm", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil { // prepares the call
		t.Fatal(err)
	}
	cases := []struct {
		kind    string
		redact  bool
		c       Context
		attempt string
	}{
		{"run", false, nil, ""}, {"run", true, nil, ""}, {"run", false, Context{"amount": 5.0, "note": "<a&b>", "tags": []string{"x"}}, ""},
		{"ask", false, nil, ""}, {"stop", false, nil, ""}, {"none", false, nil, ""}, {weird, false, nil, ""}, {weird, true, Context{"k": weird}, ""},
		{"run", false, nil, "attempt-0001-aaaaaaaaaaaa"}, {weird, true, Context{"k": weird}, "attempt-0002-bbbbbbbbbbbb"},
		{"ask", false, nil, "attempt-0003-cccccccccccc"}, {"stop", false, nil, "attempt-0004-dddddddddddd"},
	}
	for i, c := range cases {
		p := Payload{c.kind, "t<" + weird, "body " + weird}
		opt := GuardOptions{Agent: "bot <&>\"é", Redact: c.redact, Context: c.c, Attempt: c.attempt}
		kf, kg := "f:"+string(rune('a'+i)), "g:"+string(rune('a'+i))
		for round := range 2 {
			var af Answer
			n := wire.calls(t, "guard "+kf, func() (err error) { af, err = fn.Guard(ctx, kf, p, opt); return err })
			if n != 1 {
				t.Errorf("case %d round %d: the database's guard took %d round trips, not 1", i, round, n)
			}
			ag, err := client.Guard(ctx, kg, p, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sameShape(af), sameShape(ag)) {
				t.Errorf("case %d round %d: answers differ:\n function %+v\n client   %+v", i, round, af, ag)
			}
		}
		ef, err := fn.Timeline(ctx, kf)
		if err != nil {
			t.Fatal(err)
		}
		eg, err := client.Timeline(ctx, kg)
		if err != nil {
			t.Fatal(err)
		}
		if len(ef) != len(eg) || len(ef) < 2 {
			t.Fatalf("case %d: %d events through the function, %d through the client", i, len(ef), len(eg))
		}
		for j := range ef {
			f, g := ef[j], eg[j]
			for _, e := range []*Event{&f, &g} {
				for _, k := range []string{"permit_id", "lease_ms", "expires_ms"} {
					if _, ok := e.Detail[k]; ok {
						e.Detail[k] = "set"
					}
				}
			}
			if f.Type != g.Type || f.Actor != g.Actor || f.FactTable != g.FactTable || f.FactRow != kf || g.FactRow != kg ||
				!reflect.DeepEqual(f.Detail, g.Detail) || f.FactSHA256 == "" {
				t.Errorf("case %d event %d differs:\n function %+v\n client   %+v", i, j, f, g)
			}
		}
	}
	rep, err := fn.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Facts == 0 {
		t.Fatalf("verify: %+v", rep)
	}
	if _, err := fn.Export(ctx, io.Discard); err != nil {
		t.Fatalf("export: %v", err)
	}
}

// TestPostgresGuardFunctionGivesNothingNotGiven: an agent's role calling
// tollgate_guard itself, with arguments of its choosing, gets nothing a
// guard would not give it: another agent's running key answers wait, and
// that agent's permit id (which any role may read) is not its own; a
// digest that is not the payload's, a payload whose fields are not the
// ones sent, a context that is not its digest, a lease outside the
// bounds, a key outside the grammar or a permit id that is not one are
// refused with nothing written; a kind under an approval rule gets a
// request, not a permit; the time is the database's; and the helpers
// that hash rows are not the agent's to call. Verify proves the ledger
// after it all.
func TestPostgresGuardFunctionGivesNothingNotGiven(t *testing.T) {
	r := newPGRoles(t)
	boundClock(t, r.owner)
	bot1 := openAt(t, r.bot1)
	a, err := bot1.Guard(ctx, "run:mine", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err != nil || a.Verdict != Permitted {
		t.Fatalf("honest guard: %+v %v", a, err)
	}
	raw := rawDB(t, r.bot2)
	count := func() (n int64) {
		t.Helper()
		if err := raw.QueryRow("SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM intents) + (SELECT count(*) FROM permits)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	p := Payload{"run", "t", "b"}
	canon := string(p.Canonical())
	type call struct {
		key, sha                                      string
		canonical                                     any
		kind, target, bodySHA, agent, ctxSHA, ctxText string
		lease                                         int64
		permit                                        string
	}
	honest := func(key string) call {
		return call{key, p.Digest(), canon, "run", "t", sha256Hex([]byte("b")), "bot2", "", "", 60000, newUUID()}
	}
	guardAs := func(db *rawConn, c call) (engine.GuardReply, string) {
		t.Helper()
		var r engine.GuardReply
		var path string
		err := db.QueryRow(`SELECT o_path, coalesce(o_permit_id, ''), coalesce(o_lease_ms, 0), o_now FROM tollgate_guard($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, false, 0)`,
			c.key, c.sha, c.canonical, c.kind, c.target, c.bodySHA, c.agent, c.ctxSHA, c.ctxText, c.lease, c.permit).Scan(&path, &r.PermitID, &r.LeaseMS, &r.Now)
		r.Path = engine.GuardPath(path)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return r, ""
		case errors.As(err, &pe):
			return r, pe.Code
		}
		t.Fatalf("tollgate_guard: %v", err)
		return r, ""
	}
	guard := func(c call) (engine.GuardReply, string) { t.Helper(); return guardAs(raw, c) }
	before := count()
	// Another agent's key: its answer, never its permit.
	var theirs string
	if err := raw.QueryRow("SELECT permit_id FROM permits WHERE action_key = 'run:mine'").Scan(&theirs); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{newUUID(), theirs} {
		c := honest("run:mine")
		c.permit = id
		if got, code := guard(c); code != "" || got.Path != engine.GuardIndex || got.PermitID != "" {
			t.Errorf("another agent's key with permit id %s: %+v %s", id, got, code)
		}
	}
	refused := map[string]func(*call){
		"a digest that is not the payload's":   func(c *call) { c.sha = strings.Repeat("a", 64) },
		"a canonical text of another kind":     func(c *call) { c.kind = "other" },
		"a canonical text of another target":   func(c *call) { c.target = "elsewhere" },
		"a body digest that is not the body's": func(c *call) { c.bodySHA = strings.Repeat("b", 64) },
		"a canonical text with a field more": func(c *call) {
			c.canonical = `{"body":"b","kind":"run","mode":"auto","target":"t"}`
			c.sha = sha256Hex([]byte(c.canonical.(string)))
		},
		"a context that is not its digest":       func(c *call) { c.ctxText, c.ctxSHA = `{"amount":1}`, strings.Repeat("c", 64) },
		"a context digest without its context":   func(c *call) { c.ctxSHA = sha256Hex([]byte(`{"amount":1}`)) },
		"a lease of ten years":                   func(c *call) { c.lease = 10 * 365 * 24 * 3600 * 1000 },
		"a lease of nothing":                     func(c *call) { c.lease = 0 },
		"a key outside the grammar":              func(c *call) { c.key = "RUN;DROP" },
		"an epoch that is not one":               func(c *call) { c.key = "hsr1:nope:run-1" },
		"a permit id that is not one":            func(c *call) { c.permit = "x" },
		"another agent's permit id on a new key": func(c *call) { c.permit = theirs },
	}
	for what, change := range refused {
		c := honest("run:forged")
		change(&c)
		if got, code := guard(c); code == "" {
			t.Errorf("%s: stored (%+v)", what, got)
		}
	}
	if n := count(); n != before {
		t.Fatalf("the refused calls changed the ledger: %d rows, %d before", n, before)
	}
	// A kind under an approval rule: a request, whatever the caller wants.
	c := honest("ask:1")
	c.kind, c.canonical = "ask", string(Payload{"ask", "t", "b"}.Canonical())
	c.sha = Payload{"ask", "t", "b"}.Digest()
	if got, code := guard(c); code != "" || got.Path != engine.GuardNew || got.PermitID != "" {
		t.Errorf("a kind under an approval rule: %+v %s", got, code)
	}
	var permits int
	if err := raw.QueryRow("SELECT count(*) FROM permits WHERE action_key = 'ask:1'").Scan(&permits); err != nil || permits != 0 {
		t.Errorf("a kind under an approval rule got %d permits (%v)", permits, err)
	}
	// The time is the database's; the lease the caller's, within bounds.
	got, code := guard(honest("run:2"))
	if code != "" || got.Path != engine.GuardNew || got.LeaseMS != got.Now+60000 {
		t.Fatalf("honest call: %+v %s", got, code)
	}
	if d := time.Since(time.UnixMilli(got.Now)); d < -time.Minute || d > time.Minute {
		t.Errorf("the permit's time is %s from this host's", d)
	}
	// Its own permit, on a retry with its id; the other agent's role may not.
	c = honest("run:2")
	c.permit = got.PermitID
	if again, code := guard(c); code != "" || again.Path != engine.GuardOwn || again.PermitID != got.PermitID {
		t.Errorf("the retry of its own call: %+v %s", again, code)
	}
	if mine, code := guardAs(rawDB(t, r.bot1), c); code != "" || mine.Path == engine.GuardOwn {
		t.Errorf("another role's retry with the permit's id: %+v %s", mine, code)
	}
	for _, q := range []string{"SELECT tollgate_row_hash('permits', ARRAY['s'], ARRAY['x'])", "SELECT tollgate_go_json('x')"} {
		var pe *pgconn.PgError
		if _, err := raw.Exec(q); !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s as an agent: %v", q, err)
		}
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestPostgresGuardFunctionRowsMeetTheTriggers: the rows tollgate_guard
// writes pass the schema's triggers (schema 11) as any insert does: with
// the permit trigger made to refuse every permit (by the schema's owner,
// as a probe), a guard of a new key under an auto rule is refused by the
// database and stores nothing, while one under an approval rule, which
// writes no permit, still goes through.
func TestPostgresGuardFunctionRowsMeetTheTriggers(t *testing.T) {
	r := newPGRoles(t)
	boundClock(t, r.owner)
	if _, err := rawDB(t, r.owner).Exec(`CREATE OR REPLACE FUNCTION tollgate_check_permit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM tollgate_refuse(NEW.action_key, 'probe: every permit refused'); RETURN NEW; END $$`); err != nil {
		t.Fatal(err)
	}
	bot := openAt(t, r.bot1)
	if _, ok := bot.serverGuard(bot.grantInputs()); !ok {
		t.Fatal("the agent's store does not guard through the database's call")
	}
	a, err := bot.Guard(ctx, "run:probe", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "probe") {
		t.Fatalf("a permit the trigger refuses: %+v %v", a, err)
	}
	var n int
	if err := rawDB(t, r.owner).QueryRow("SELECT (SELECT count(*) FROM intents WHERE action_key = 'run:probe') + (SELECT count(*) FROM events WHERE action_key = 'run:probe')").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused guard stored %d rows (%v)", n, err)
	}
	if a, err := bot.Guard(ctx, "ask:probe", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil || a.State != StatePending {
		t.Fatalf("a guard with no permit: %+v %v", a, err)
	}
}

// TestPostgresGuardWithNoTimeLeftSendsNothing: an attempt that holds a
// connection with less time left than the database needs to give up a
// lock and say so sends nothing (engine.ErrNotSent), as does one that
// cannot get a connection in its time: sent, its
// autocommit call could commit after the client gave up, and the caller
// would be told the commit is unknown instead of safe to repeat. A
// caller on a deadline gets a refusal that is not ErrCommitUnknown, and
// the key stays unrecorded.
func TestPostgresGuardWithNoTimeLeftSendsNothing(t *testing.T) {
	r := newPGRoles(t)
	bot := openAt(t, r.bot1)
	if a, err := bot.Guard(ctx, "run:warm", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("a guard with time: %+v %v", a, err)
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err := bot.Guard(short, "run:late", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err == nil || !strings.Contains(err.Error(), engine.ErrNotSent.Error()) || errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("a guard with 30 ms left: %v, want nothing sent and not a commit unknown", err)
	}
	if _, err := bot.Status(ctx, "run:late"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the key was recorded: %v", err)
	}
}

// TestPostgresGuardFunctionAttempt: on PostgreSQL a guard that carries an
// attempt id is the database's one call (schema 101), which stores the
// attempt with the permit it issues; the attempt's retry is given that
// permit again (its id and lease, replayed) in one round trip, also under
// the agent's name spelled otherwise; another attempt id, no attempt id
// or another agent's name with the id waits and never sees the permit's
// id; once reported, the attempt gets the key's state, from its row, in
// one round trip (no read transaction before it).
func TestPostgresGuardFunctionAttempt(t *testing.T) {
	_, fn, _, wire := functionAndClient(t)
	if _, err := fn.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	const mine, other = "attempt-0001-aaaaaaaaaaaa", "attempt-0002-bbbbbbbbbbbb"
	p := Payload{"run", "t", "b"}
	if _, err := fn.Guard(ctx, "run:warm", p, GuardOptions{Agent: "bot-1", Attempt: other}); err != nil { // prepares the call
		t.Fatal(err)
	}
	guard := func(what, agent, attempt string) Answer {
		t.Helper()
		var a Answer
		if n := wire.calls(t, what, func() (err error) {
			a, err = fn.Guard(ctx, "run:1", p, GuardOptions{Agent: agent, Attempt: attempt})
			return err
		}); n != 1 {
			t.Errorf("%s: %d round trips, not 1", what, n)
		}
		return a
	}
	orig := guard("first guard", "bot-1", mine)
	if orig.Verdict != Permitted || orig.PermitID == "" || orig.Replayed {
		t.Fatalf("first guard: %+v", orig)
	}
	var digest, permit string
	if err := fn.r.QueryRow("SELECT attempt_sha256, permit_id FROM permit_attempts WHERE action_key = 'run:1'").Scan(&digest, &permit); err != nil {
		t.Fatalf("the attempt's row: %v", err)
	}
	if digest != attemptDigest(mine) || permit != orig.PermitID {
		t.Fatalf("the attempt's row holds %s for permit %s, want %s for %s", digest, permit, attemptDigest(mine), orig.PermitID)
	}
	for _, tc := range []struct{ what, agent, attempt string }{{"the attempt's retry", "bot-1", mine}, {"the retry, name spelled otherwise", "BOT-1", mine}} {
		if a := guard(tc.what, tc.agent, tc.attempt); a.PermitID != orig.PermitID || !a.Replayed || a.Verdict != Permitted || !a.LeaseUntil.Equal(orig.LeaseUntil) {
			t.Errorf("%s: %+v, want permit %s until %s", tc.what, a, orig.PermitID, orig.LeaseUntil)
		}
	}
	for _, tc := range []struct{ what, agent, attempt string }{{"another attempt", "bot-1", other}, {"no attempt", "bot-1", ""}, {"another agent with the attempt", "bot-2", mine}} {
		if a := guard(tc.what, tc.agent, tc.attempt); a.PermitID != "" || a.Verdict != RetryLater || a.State != StateExecuting {
			t.Errorf("%s: %+v, want to wait with no permit", tc.what, a)
		}
	}
	if _, err := fn.Report(ctx, "run:1", orig.PermitID, Succeeded, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if a := guard("the attempt after the report", "bot-1", mine); a.PermitID != "" || a.State != StateSucceeded {
		t.Errorf("after the report: %+v", a)
	}
	if rep, err := fn.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
}

// TestPostgresAttemptRetryOfSettledKeyIsOneRead: where the database's call does
// not answer a guard (here the client's key transactions on PostgreSQL,
// as on SQLite), the retry of a settled key with its attempt id is
// answered from the key's row in one round trip: the attempt's read
// transaction runs only for a key whose row says it executes, and there
// still gives the attempt its permit.
func TestPostgresAttemptRetryOfSettledKeyIsOneRead(t *testing.T) {
	u := pgtest.DB(t)
	wire := &wireCounter{}
	eng, err := postgres.Open(ctx, u, postgres.Options{After: afterMigration(time.Now, postgres.Rebind), Tracer: wire})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, clientPath{eng}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	const attempt = "attempt-0001-aaaaaaaaaaaa"
	p, opt := Payload{"run", "t", "b"}, GuardOptions{Agent: "bot-1", Attempt: attempt}
	for _, key := range []string{"run:warm", "run:1"} {
		a, err := s.Guard(ctx, key, p, opt)
		if err != nil || a.PermitID == "" {
			t.Fatalf("%s: %+v %v", key, a, err)
		}
		var again Answer
		wire.calls(t, "the attempt's retry while it executes", func() (err error) { again, err = s.Guard(ctx, key, p, opt); return err })
		if again.PermitID != a.PermitID || !again.Replayed {
			t.Fatalf("%s: the attempt's retry got %+v, want permit %s", key, again, a.PermitID)
		}
		if _, err := s.Report(ctx, key, a.PermitID, Succeeded, ReportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var a Answer
	if n := wire.calls(t, "the attempt's retry once settled", func() (err error) { a, err = s.Guard(ctx, "run:1", p, opt); return err }); n != 1 {
		t.Errorf("the retry of a settled key with its attempt id took %d round trips, not 1", n)
	}
	if a.State != StateSucceeded || a.PermitID != "" {
		t.Fatalf("the settled key's retry: %+v", a)
	}
}
