package ledger

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// fullStatus is Status as it read before schema 14's one-trip status:
// every table in one read transaction (status).
func fullStatus(s *Store, key string) (Detail, error) {
	k, err := ParseKey(key)
	if err != nil {
		return Detail{}, err
	}
	return read(ctx, s, func(tx *Tx) (Detail, error) {
		d := Detail{Key: key, Logical: k.Logical, Epoch: k.Epoch}
		return d, status(ctx, tx, &d)
	})
}

// TestPostgresStatusOneTripIsTheFullRead: on PostgreSQL, Status answers
// from one statement (statusSQL) exactly what the read of every table in
// one transaction answers, for a key in every state (pending, approved,
// rejected, expired, denied, permitted, lease run out, succeeded,
// failed, uncertain, reconciled, conflict, fenced, archived, redacted,
// with a context, not found), as the owner and as an agent's role, which
// reads another role's bodies as NULL in both.
func TestPostgresStatusOneTripIsTheFullRead(t *testing.T) {
	owner := pgtest.DB(t)
	c := newClock()
	s, err := Open(ctx, owner, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []approvals.Rule{{Pattern: "run", Mode: approvals.Auto}, {Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "no", Mode: approvals.Deny}} {
		must(s.SetPolicy(ctx, r, "root"))
	}
	guard := func(key, kind, body string, opt GuardOptions) Answer {
		t.Helper()
		if opt.Agent == "" {
			opt.Agent = "bot1"
		}
		a, err := s.Guard(ctx, key, Payload{kind, "t", body}, opt)
		var ce *ConflictError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("guard %s: %v", key, err)
		}
		return a
	}
	report := func(key string, a Answer, o Outcome) {
		t.Helper()
		must(s.Report(ctx, key, a.PermitID, o, ReportOptions{Ref: "r-" + key, Latency: time.Second, Result: "done"}))
	}
	report("run:old", guard("run:old", "run", "b", GuardOptions{}), Succeeded)
	c.Add(2 * time.Hour)
	must(s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: filepath.Join(t.TempDir(), "a.db"), Operator: "alice"}))

	guard("run:exec", "run", "secret body", GuardOptions{Context: Context{"ticket": "T-1", "n": 3.0}, Lease: 3 * time.Hour})
	guard("run:lease", "run", "b", GuardOptions{Lease: time.Minute})
	guard("run:red", "run", "redacted body", GuardOptions{Redact: true})
	report("run:ok", guard("run:ok", "run", "b", GuardOptions{}), Succeeded)
	report("run:fail", guard("run:fail", "run", "b", GuardOptions{}), Failed)
	report("run:unk", guard("run:unk", "run", "b", GuardOptions{}), Unknown)
	report("run:rec", guard("run:rec", "run", "b", GuardOptions{}), Unknown)
	must(s.Reconcile(ctx, "run:rec", ResultNotExecuted, "alice", "checked"))
	guard("run:conf", "run", "b", GuardOptions{})
	guard("run:conf", "run", "other", GuardOptions{Agent: "bot2"})
	guard("ask:pend", "ask", "b", GuardOptions{})
	guard("ask:ok", "ask", "b", GuardOptions{})
	must(s.Approve(ctx, "ask:ok", "alice", "fine"))
	report("ask:ok", guard("ask:ok", "ask", "b", GuardOptions{}), Succeeded)
	guard("ask:no", "ask", "b", GuardOptions{})
	must(s.Reject(ctx, "ask:no", "alice", "no"))
	guard("no:deny", "no", "b", GuardOptions{})
	guard("ask:exp", "ask", "b", GuardOptions{})
	c.Add(90 * time.Minute) // ask:exp's request and run:lease's lease run out
	guard("ask:fenced", "ask", "b", GuardOptions{})
	must(s.ActivateEpoch(ctx, "", "root"))
	if _, err := s.Guard(ctx, "ask:fenced", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err == nil {
		t.Fatal("ask:fenced was not fenced")
	}

	keys := []string{"run:old", "run:exec", "run:lease", "run:red", "run:ok", "run:fail", "run:unk", "run:rec", "run:conf",
		"ask:pend", "ask:ok", "ask:no", "no:deny", "ask:exp", "ask:fenced", "no:such-key"}
	bot2, err := Open(ctx, pgtest.Role(t, owner, "bot2", "tollgate_agent"), Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer bot2.Close()
	states := map[State]bool{}
	for _, who := range []struct {
		name string
		s    *Store
	}{{"owner", s}, {"bot2", bot2}} {
		for _, key := range keys {
			got, gotErr := who.s.Status(ctx, key)
			want, wantErr := fullStatus(who.s, key)
			if !errors.Is(gotErr, ErrNotFound) || !errors.Is(wantErr, ErrNotFound) {
				if gotErr != nil || wantErr != nil {
					t.Fatalf("%s: %s: %v, the full read: %v", who.name, key, gotErr, wantErr)
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("%s: status of %s:\n%s\nthe full read:\n%s", who.name, key, g, w)
			}
			states[got.State] = true
			if who.name == "bot2" && got.Payload != nil {
				t.Errorf("bot2 reads the body of %s, which the owner wrote: %+v", key, got.Payload)
			}
			if who.name == "owner" && key == "run:exec" && (got.Payload == nil || got.Payload.Body != "secret body" || len(got.Context) == 0) {
				t.Errorf("the owner's status of run:exec: %+v", got)
			}
		}
	}
	for _, st := range []State{StatePending, StateExpired, StateRejected, StateExecuting, StateSucceeded, StateFailed, StateUncertain, StateReconciled, StateDenied} {
		if !states[st] {
			t.Errorf("no key in state %s: %v", st, states)
		}
	}
}
