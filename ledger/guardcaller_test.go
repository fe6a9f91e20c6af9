package ledger

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestGuardCallerOwnKeysOnly: with GuardOptions.Caller a guard refuses
// a key recorded under an agent name the caller may not use, on every
// path a guard reads it by (the retry's projection row, the database's
// one-call guard on PostgreSQL, the transaction's facts), before taking
// a step or logging a conflict; the caller is told the owner's name as
// stored. Without Caller the same guard takes the other's permit, which
// is what the option is for.
func TestGuardCallerOwnKeysOnly(t *testing.T) {
	ctx := context.Background()
	for _, grouped := range []bool{false, true} {
		s, err := Open(ctx, testLedger(t), Options{GroupCommit: grouped})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, r := range []approvals.Rule{{Pattern: "refund", Mode: approvals.Auto}, {Pattern: "email", Mode: approvals.Approval, TTL: time.Hour}} {
			if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		var asked []string
		only := func(name string) func(context.Context, string) (bool, error) {
			return func(_ context.Context, owner string) (bool, error) {
				mu.Lock()
				asked = append(asked, owner)
				mu.Unlock()
				return owner == name, nil
			}
		}
		asA := GuardOptions{Agent: "bot-a", Caller: only("bot-a")}
		asB := GuardOptions{Agent: "bot-b", Caller: only("bot-b")}
		refund := Payload{Kind: "refund", Target: "c", Body: "10"}
		if a, err := s.Guard(ctx, "refund:1", refund, asA); err != nil || a.Verdict != Permitted {
			t.Fatalf("grouped=%v: the owner's new key: %v %v", grouped, a, err)
		}
		// An identical retry by another: the projection row's path (the
		// database's one call on PostgreSQL).
		if a, err := s.Guard(ctx, "refund:1", refund, asB); !errors.Is(err, ErrNotCallersKey) || !errors.Is(err, ErrNotPermitted) || a.Verdict != "" {
			t.Fatalf("grouped=%v: another agent's retry: %v %v", grouped, a, err)
		}
		email := Payload{Kind: "email", Target: "c", Body: "hi"}
		if a, err := s.Guard(ctx, "email:1", email, asA); err != nil || a.Verdict != RetryLater {
			t.Fatalf("grouped=%v: request: %v %v", grouped, a, err)
		}
		if _, err := s.Approve(ctx, "email:1", "alice", ""); err != nil {
			t.Fatal(err)
		}
		// An approved key needs a step: the transaction's path. With the
		// key's payload and with another (which would log a conflict).
		for _, p := range []Payload{email, {Kind: "email", Target: "c", Body: "other"}} {
			mu.Lock()
			asked = nil
			mu.Unlock()
			if a, err := s.Guard(ctx, "email:1", p, asB); !errors.Is(err, ErrNotCallersKey) || a.PermitID != "" {
				t.Fatalf("grouped=%v: another agent on an approved key: %v %v", grouped, a, err)
			}
			mu.Lock()
			if len(asked) == 0 || asked[len(asked)-1] != "bot-a" {
				t.Fatalf("grouped=%v: Caller was asked about %q, not the owner bot-a", grouped, asked)
			}
			mu.Unlock()
			if d, err := s.Status(ctx, "email:1"); err != nil || d.State != StateApproved {
				t.Fatalf("grouped=%v: after the refusal: %q %v", grouped, d.State, err)
			}
		}
		if c, err := s.Conflicts(ctx, true, "", 0, 0); err != nil || len(c) != 0 {
			t.Fatalf("grouped=%v: a refused guard logged conflicts: %v %v", grouped, c, err)
		}
		if a, err := s.Guard(ctx, "email:1", email, asA); err != nil || a.Verdict != Permitted {
			t.Fatalf("grouped=%v: the owner after approval: %v %v", grouped, a, err)
		}
		// Without Caller, any caller of the store acts on any key.
		if a, err := s.Guard(ctx, "email:2", email, asA); err != nil || a.Verdict != RetryLater {
			t.Fatalf("grouped=%v: %v %v", grouped, a, err)
		}
		if _, err := s.Approve(ctx, "email:2", "alice", ""); err != nil {
			t.Fatal(err)
		}
		if a, err := s.Guard(ctx, "email:2", email, GuardOptions{Agent: "bot-b"}); err != nil || a.Verdict != Permitted {
			t.Fatalf("grouped=%v: without Caller: %v %v", grouped, a, err)
		}
	}
}
