package ledger

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The retry fast path must give the answer the transactional path gives,
// for every stage a key can be in, whatever its agent name holds.
func TestRetryFastPathMatchesFullPath(t *testing.T) {
	sqliteOnly(t)
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "no", Mode: approvals.Deny}, "root")
	agent := "bot 7  2 pending 0 " // spaces, digits and stage words must not shift a field
	type key struct {
		name string
		p    Payload
	}
	var keys []key
	add := func(name, kind string, redact bool, then func(string)) {
		p := Payload{kind, "t-" + name, "b"}
		if _, err := s.Guard(ctx, name, p, GuardOptions{Agent: agent, Redact: redact}); err != nil {
			t.Fatal(name, err)
		}
		if then != nil {
			then(name)
		}
		keys = append(keys, key{name, p})
	}
	permit := func(k string) string {
		d, err := s.Status(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return d.PermitID
	}
	add("executing", "auto", false, nil)
	add("redacted", "auto", true, nil)
	add("succeeded", "auto", false, func(k string) { s.Report(ctx, k, permit(k), Succeeded, ReportOptions{}) })
	add("failed", "auto", false, func(k string) { s.Report(ctx, k, permit(k), Failed, ReportOptions{}) })
	add("unknown", "auto", false, func(k string) { s.Report(ctx, k, permit(k), Unknown, ReportOptions{}) })
	add("pending", "ask", false, nil)
	add("denied", "no", false, nil)
	add("rejected", "ask", false, func(k string) { s.Reject(ctx, k, "alice", "no") })
	if _, err := s.Record(ctx, "recorded", Payload{"ask", "t", "b"}, RecordOptions{Agent: agent}); err != nil {
		t.Fatal(err)
	}
	keys = append(keys, key{"recorded", Payload{"ask", "t", "b"}})
	if got := runFixture(t, s.Path(), "fixture-made"); got != "1" {
		t.Fatalf("fixture insert rowcount %s", got)
	}
	keys = append(keys, key{"fixture-made", Payload{Kind: "draft", Target: "fixture-article", Body: "Fixture text"}})

	// A store with its fast path removed answers from the transactional
	// path; a one-shot store asks its writer connection.
	full, err := Open(ctx, testPath(s), Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	full.fast.Close()
	full.fast = nil
	one, err := Open(ctx, testPath(s), Options{Now: clk.Now, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for _, lapse := range []time.Duration{0, 2 * time.Hour} { // then pending is expired, executing uncertain
		clk.Add(lapse)
		for _, k := range keys {
			if _, ok := s.fastLookup(ctx, k.name, k.p.Kind, k.p.Digest(), ""); !ok {
				t.Fatalf("%s: fast path missed an identical retry", k.name)
			}
			if _, ok := one.fastLookup(ctx, k.name, k.p.Kind, k.p.Digest(), ""); !ok {
				t.Fatalf("%s: one-shot fast path missed an identical retry", k.name)
			}
			a, errA := s.Record(ctx, k.name, k.p, RecordOptions{})
			b, errB := full.Record(ctx, k.name, k.p, RecordOptions{})
			c, errC := one.Record(ctx, k.name, k.p, RecordOptions{})
			if errA != nil || errB != nil || errC != nil || !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
				t.Fatalf("%s after %v: fast %+v (%v)\nfull %+v (%v)\none-shot %+v (%v)", k.name, lapse, a, errA, b, errB, c, errC)
			}
			if a.Kind != k.p.Kind || (k.name != "fixture-made" && a.Agent != agent) {
				t.Fatalf("%s: kind %q agent %q", k.name, a.Kind, a.Agent)
			}
			switch a.State {
			case StateRecorded, StateApproved:
				continue // guard writes a step: no replay to compare
			}
			ga, errA := s.Guard(ctx, k.name, k.p, GuardOptions{})
			gb, errB := full.Guard(ctx, k.name, k.p, GuardOptions{})
			gc, errC := one.Guard(ctx, k.name, k.p, GuardOptions{})
			if !errors.Is(errA, errB) || !errors.Is(errA, errC) || !reflect.DeepEqual(ga, gb) || !reflect.DeepEqual(ga, gc) {
				t.Fatalf("%s: guard fast %+v (%v)\nfull %+v (%v)\none-shot %+v (%v)", k.name, ga, errA, gb, errB, gc, errC)
			}
		}
	}
	// A different payload is never answered by the fast path.
	if _, ok := s.fastLookup(ctx, "succeeded", "auto", Payload{"auto", "t-succeeded", "other"}.Digest(), ""); ok {
		t.Fatal("fast path answered a conflicting payload")
	}
	if _, ok := s.fastLookup(ctx, "missing", keys[0].p.Kind, keys[0].p.Digest(), ""); ok {
		t.Fatal("fast path answered an unknown key")
	}
}

// The retry lookup is one search of the projection by its primary key
// (schema 12 keys it by the action key): never a scan, nor a search of
// another index and then of the table.
func TestRetryLookupIsOneSearch(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	plan := queryPlan(t, s.r, fastQuery, "k")
	if got := strings.Join(plan, "; "); got != "SEARCH action_index USING PRIMARY KEY (action_key=?)" {
		t.Fatalf("plan = %q", got)
	}
}

func TestUnpackAnswer(t *testing.T) {
	h, c := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	tests := []struct {
		in   string
		ok   bool
		want indexRow
	}{
		{h + "pending 1700 0 agent", true, indexRow{SHA256: h, Stage: "pending", Deadline: 1700, Agent: "agent"}},
		{h + "executing 0 3 ", true, indexRow{SHA256: h, Stage: "executing", Retained: true, Redacted: true}},
		{h + "recorded 0 1  a b 9 \n", true, indexRow{SHA256: h, Stage: "recorded", Retained: true, Agent: " a b 9 \n"}},
		{h + "recorded 0 2 x", true, indexRow{SHA256: h, Stage: "recorded", Redacted: true, Agent: "x"}},
		{h + "pending 5 1" + c + " bot", true, indexRow{SHA256: h, Stage: "pending", Deadline: 5, Retained: true, Context: c, Agent: "bot"}},
		{h + "pending 5 1" + c + "bot", false, indexRow{}},
		{h + "pending 5 1" + c[:10] + " bot", false, indexRow{}},
		{h + "recorded 0 2x", false, indexRow{}},
		{h[:63], false, indexRow{}},
		{h + "recorded", false, indexRow{}},
		{h + "recorded 12", false, indexRow{}},
		{h + "recorded 12 ", false, indexRow{}},
		{h + "recorded x 1", false, indexRow{}},
		{h + "recorded 1 4", false, indexRow{}},
	}
	for _, tc := range tests {
		var r indexRow
		ok := r.unpack(tc.in)
		if ok != tc.ok || (ok && r != tc.want) {
			t.Errorf("unpack(%q) = %+v, %v; want %+v, %v", tc.in, r, ok, tc.want, tc.ok)
		}
	}
}

// An intent recorded by the seed fixture has no payload row; the first
// guard with a payload of the stored digest is judged by that payload's
// kind, as any other key is.
func TestFixtureIntentPolicyByKind(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "draft", Mode: approvals.Deny}, "root")
	if got := runFixture(t, s.Path(), "fixture-article-v1"); got != "1" {
		t.Fatalf("fixture insert rowcount %s", got)
	}
	a, err := s.Guard(ctx, "fixture-article-v1", Payload{Kind: "draft", Target: "fixture-article", Body: "Fixture text"}, GuardOptions{})
	if err != nil || a.Verdict != Denied || a.Policy != approvals.Deny {
		t.Fatalf("guard of a fixture intent under a deny rule for its kind = %+v, %v", a, err)
	}
}

// An agent polling a key it has already recorded, from a one-shot process
// (the CLI), is answered while another process holds the write lock: it
// does not queue behind writers.
func TestOneShotRetryTakesNoWriteLock(t *testing.T) {
	sqliteOnly(t)
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
	p := Payload{"ask", "t", "b"}
	if a, err := s.Guard(ctx, "poll", p, GuardOptions{Agent: "bot"}); err != nil || a.State != StatePending {
		t.Fatalf("guard = %+v, %v", a, err)
	}
	one, err := Open(ctx, testPath(s), Options{Now: clk.Now, OneShot: true, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	db := rawDB(t, s.Path())
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if a, err := one.Guard(short, "poll", p, GuardOptions{Agent: "bot"}); err != nil || a.Verdict != RetryLater || !a.Replayed {
		t.Fatalf("guard replay under another writer = %+v, %v", a, err)
	}
	if in, err := one.Record(short, "poll", p, RecordOptions{}); err != nil || !in.Replayed {
		t.Fatalf("record replay under another writer = %+v, %v", in, err)
	}
	// A new key does need the lock, and waits for it until the caller's
	// context ends (reported as busy or as the context's deadline,
	// depending on where the wait was when it ended).
	if _, err := one.Record(short, "new", p, RecordOptions{}); !errors.Is(err, ErrBusy) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("record of a new key under another writer: %v, want a wait that ends with the context", err)
	}
	if short.Err() == nil {
		t.Fatal("the new key did not wait for the lock")
	}
}
