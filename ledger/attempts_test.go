package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestAttemptGetsItsPermitBack: a guard whose answer was lost is repeated
// with the same attempt id and is given the same permit (replayed, the
// same id and lease), on an auto key and on an approved one, while the
// permit executes; a different attempt id, no attempt id, another agent
// or another payload never gets the permit's id; once the key is
// reported or its lease has run out, the attempt gets the key's state
// and no permit. Runs on both engines (on PostgreSQL a guard without an
// attempt id is the database's one-call guard, with one the key
// transaction: the answers agree).
func TestAttemptGetsItsPermitBack(t *testing.T) {
	s, clk := openTest(t)
	for _, r := range []approvals.Rule{{Pattern: "auto.*", Mode: approvals.Auto}, {Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	const first, second = "attempt-0001-aaaaaaaaaaaa", "attempt-0002-bbbbbbbbbbbb"
	agent := s.agentOr("bot-1")
	p, pa := Payload{"auto.refund", "acct-1", "40 EUR"}, Payload{"ask", "acct-1", "40 EUR"}
	orig, err := s.Guard(ctx, "k:auto", p, GuardOptions{Agent: agent, Attempt: first})
	if err != nil || orig.Verdict != Permitted || orig.PermitID == "" {
		t.Fatalf("first guard: %+v %v", orig, err)
	}
	// An approved key: the attempt that is issued the permit is the one
	// stored, not the one that made the request.
	if a, err := s.Guard(ctx, "k:ask", pa, GuardOptions{Agent: agent, Attempt: first}); err != nil || a.State != StatePending {
		t.Fatalf("request: %+v %v", a, err)
	}
	if _, err := s.Approve(ctx, "k:ask", "alice", ""); err != nil {
		t.Fatal(err)
	}
	approved, err := s.Guard(ctx, "k:ask", pa, GuardOptions{Agent: agent, Attempt: second})
	if err != nil || approved.PermitID == "" {
		t.Fatalf("approved guard: %+v %v", approved, err)
	}
	tests := []struct {
		name    string
		key     string
		p       Payload
		opt     GuardOptions
		permit  string // the permit id the call must get, "" for none
		verdict Verdict
		err     error
	}{
		{"same attempt", "k:auto", p, GuardOptions{Agent: agent, Attempt: first}, orig.PermitID, Permitted, nil},
		{"same attempt, name spelled otherwise", "k:auto", p, GuardOptions{Agent: strings.ToUpper(agent), Attempt: first}, orig.PermitID, Permitted, nil},
		{"same attempt on the approved key", "k:ask", pa, GuardOptions{Agent: agent, Attempt: second}, approved.PermitID, Permitted, nil},
		{"the requesting attempt on the approved key", "k:ask", pa, GuardOptions{Agent: agent, Attempt: first}, "", RetryLater, nil},
		{"another attempt", "k:auto", p, GuardOptions{Agent: agent, Attempt: second}, "", RetryLater, nil},
		{"no attempt", "k:auto", p, GuardOptions{Agent: agent}, "", RetryLater, nil},
		{"another agent with the attempt", "k:auto", p, GuardOptions{Agent: "bot-2", Attempt: first}, "", RetryLater, nil},
		{"another payload with the attempt", "k:auto", Payload{"auto.refund", "acct-1", "4000 EUR"}, GuardOptions{Agent: agent, Attempt: first}, "", "", &ConflictError{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if onPostgres && tc.opt.Agent == "bot-2" {
				t.Skip("a second agent's name is a second login role's on PostgreSQL (TestPostgresAttemptOfAnotherRole)")
			}
			a, err := s.Guard(ctx, tc.key, tc.p, tc.opt)
			if tc.err != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) || a.PermitID != "" {
					t.Fatalf("%+v %v, want a conflict and no permit", a, err)
				}
				return
			}
			if err != nil || a.PermitID != tc.permit || a.Verdict != tc.verdict || a.State != StateExecuting {
				t.Fatalf("%+v %v, want verdict %s, permit %q", a, err, tc.verdict, tc.permit)
			}
			if tc.permit != "" && (!a.Replayed || a.LeaseUntil.IsZero()) {
				t.Fatalf("a replayed permit: %+v", a)
			}
			if tc.permit == orig.PermitID && !a.LeaseUntil.Equal(orig.LeaseUntil) {
				t.Fatalf("lease %s, first answer's %s", a.LeaseUntil, orig.LeaseUntil)
			}
		})
	}
	var n int
	if err := s.r.QueryRow(s.eng.Rebind("SELECT count(*) FROM permits")).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d permits (%v), want 2", n, err)
	}
	// Reported: the attempt gets the settled state, not the permit.
	if _, err := s.Report(ctx, "k:auto", orig.PermitID, Succeeded, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Guard(ctx, "k:auto", p, GuardOptions{Agent: agent, Attempt: first}); err != nil || a.PermitID != "" || a.State != StateSucceeded {
		t.Fatalf("after the report: %+v %v", a, err)
	}
	// The lease ran out: uncertain, not the permit.
	clk.Add(DefaultLease + time.Minute)
	if a, err := s.Guard(ctx, "k:ask", pa, GuardOptions{Agent: agent, Attempt: second}); err != nil || a.PermitID != "" || a.State != StateUncertain {
		t.Fatalf("after the lease: %+v %v", a, err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
	var out bytes.Buffer
	if _, err := s.Export(ctx, &out); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k:auto", "k:ask"} {
		d, err := s.Status(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(d)
		out.Write(js)
	}
	if strings.Contains(out.String(), first) || strings.Contains(out.String(), second) {
		t.Fatal("an attempt id is in status or export output")
	}
}

// TestAttemptIDIsChecked: an attempt id outside its bounds or charset is
// refused by rule, with nothing stored.
func TestAttemptIDIsChecked(t *testing.T) {
	s, _ := openTest(t)
	for _, bad := range []struct{ name, id string }{
		{"too short", "abc"},
		{"too long", strings.Repeat("a", MaxAttemptLen+1)},
		{"a space", "attempt 0001 aaaaaaaa"},
		{"a slash", "attempt/0001/aaaaaaaa"},
		{"a newline", "attempt-0001-aaaaaa\n"},
		{"not ASCII", "attempt-0001-ａａａａａａ"},
		{"a control character", "attempt-0001-\x1b[31maaaa"},
	} {
		_, err := s.Guard(ctx, "k:bad", Payload{"auto.x", "t", "b"}, GuardOptions{Agent: s.agentOr("bot-1"), Attempt: bad.id})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "attempt id") {
			t.Errorf("%s: %v, want invalid input naming the attempt id", bad.name, err)
		}
		if strings.Contains(bad.id, "\x1b") && err != nil && strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%s: the refusal repeats the control character", bad.name)
		}
	}
	if _, err := s.Status(ctx, "k:bad"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused guard stored its key: %v", err)
	}
	for _, good := range []string{"6f1c2e0a-4b7d-4c1e-9a2b-3c4d5e6f7a8b", strings.Repeat("Z", MaxAttemptLen), "aB3_-.:aB3_-.:aB"} {
		if err := CheckAttempt(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

// TestVerifyNamesTamperedAttempt: an attempt's digest replaced (to give
// the permit to another attempt) is named by verify.
func TestVerifyNamesTamperedAttempt(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "auto.*", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Guard(ctx, "k:auto", Payload{"auto.x", "t", "b"}, GuardOptions{Agent: s.agentOr("bot-1"), Attempt: "attempt-0001-aaaaaaaaaaaa"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cp, db := tamperCopy(t, testPath(s))
	if _, err := db.Exec("UPDATE permit_attempts SET attempt_sha256 = ?", attemptDigest("attempt-9999-mallory00000")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err := Open(ctx, cp, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rep, err := c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	requireNamed(t, rep, "permit_attempts", "action_key=k:auto")
}

// TestPostgresAttemptOfAnotherRole: on PostgreSQL, with the database's
// clock, a guard without an attempt id is the one-call guard and one with
// an id the key transaction; both answer an executing key alike (75, no
// permit id) unless the id is the one the permit was issued to. Another
// agent's role carrying that id is not given the permit, and cannot
// attach an attempt of its own to another's permit in SQL (TG002).
func TestPostgresAttemptOfAnotherRole(t *testing.T) {
	r := newPGRoles(t)
	bot1, bot2, alice := openAt(t, r.bot1), openAt(t, r.bot2), openAt(t, r.alice)
	const mine, other = "attempt-bot1-0001-aaaaaaaa", "attempt-bot1-0002-bbbbbbbb"
	run := Payload{"run", "t", "nightly"}
	orig, err := bot1.Guard(ctx, "run:1", run, GuardOptions{Attempt: mine})
	if err != nil || orig.PermitID == "" {
		t.Fatalf("first guard: %+v %v", orig, err)
	}
	// The one-call guard's answer, and the key transaction's for an
	// attempt that was not issued the permit, are the same.
	server, err := bot1.Guard(ctx, "run:1", run, GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := bot1.Guard(ctx, "run:1", run, GuardOptions{Attempt: other})
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]Answer{"one-call": server, "key transaction": client} {
		if a.PermitID != "" || a.Verdict != RetryLater || a.State != StateExecuting {
			t.Errorf("%s guard of an executing key: %+v", name, a)
		}
	}
	if server.Verdict != client.Verdict || server.State != client.State || server.Replayed != client.Replayed || !server.LeaseUntil.Equal(client.LeaseUntil) || server.Reason != client.Reason {
		t.Errorf("the two paths disagree: %+v and %+v", server, client)
	}
	if a, err := bot1.Guard(ctx, "run:1", run, GuardOptions{Attempt: mine}); err != nil || a.PermitID != orig.PermitID || !a.Replayed {
		t.Fatalf("the attempt's retry: %+v %v", a, err)
	}
	if a, err := bot2.Guard(ctx, "run:1", run, GuardOptions{Attempt: mine}); err != nil || a.PermitID != "" {
		t.Fatalf("another role with the attempt: %+v %v", a, err)
	}
	// A key whose permit the one-call guard issued has no attempt: any id
	// waits.
	if a, err := bot1.Guard(ctx, "run:2", run, GuardOptions{}); err != nil || a.PermitID == "" {
		t.Fatalf("one-call permit: %+v %v", a, err)
	}
	if a, err := bot1.Guard(ctx, "run:2", run, GuardOptions{Attempt: mine}); err != nil || a.PermitID != "" {
		t.Fatalf("an attempt on a permit issued without one: %+v %v", a, err)
	}
	raw := rawDB(t, r.bot2)
	_, err = raw.DB.Exec("SELECT "+insertFactFn+"permit_attempts($1, $2)", []string{"action_key", "permit_id", "agent", "attempt_sha256", "at_ms"},
		[]string{"run:2", "00000000-0000-4000-8000-000000000000", roleOf(r.bot2), attemptDigest(other), "1"})
	if pgCode(err) != "TG002" {
		t.Errorf("another role attaching an attempt: %v (%s), want TG002", err, pgCode(err))
	}
	// An approved key: the attempt that is issued the permit is kept.
	ask := Payload{"ask", "t", "refund"}
	if a, err := bot1.Guard(ctx, "ask:1", ask, GuardOptions{Attempt: mine}); err != nil || a.State != StatePending {
		t.Fatalf("request: %+v %v", a, err)
	}
	if _, err := alice.Approve(ctx, "ask:1", "alice", ""); err != nil {
		t.Fatal(err)
	}
	granted, err := bot1.Guard(ctx, "ask:1", ask, GuardOptions{Attempt: other})
	if err != nil || granted.PermitID == "" {
		t.Fatalf("approved: %+v %v", granted, err)
	}
	if a, err := bot1.Guard(ctx, "ask:1", ask, GuardOptions{Attempt: other}); err != nil || a.PermitID != granted.PermitID {
		t.Fatalf("the approved attempt's retry: %+v %v", a, err)
	}
	if a, err := bot1.Guard(ctx, "ask:1", ask, GuardOptions{Attempt: mine}); err != nil || a.PermitID != "" {
		t.Fatalf("the requesting attempt: %+v %v", a, err)
	}
	if rep, err := openAt(t, r.owner).Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
}
