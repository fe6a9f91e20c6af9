package ledger

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

var pay = Payload{Kind: "refund", Target: "acct-1", Body: "refund 10"}

// step is one call in a transition walk.
type step struct {
	do      string // guard, approve, reject, report-<outcome>, reconcile-<result>, wait-<duration>, self-approve
	state   State
	verdict Verdict
	err     error
	newKey  bool
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		name   string
		policy approvals.Mode
		steps  []step
	}{
		{"auto succeeds", approvals.Auto, []step{
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "guard", state: StateExecuting, verdict: RetryLater},
			{do: "report-succeeded", state: StateSucceeded},
			{do: "report-succeeded", state: StateSucceeded},
			{do: "report-failed", err: ErrReportDiffers},
			{do: "guard", state: StateSucceeded, verdict: Settled},
			{do: "reconcile-executed", err: ErrNotUncertain},
			{do: "approve", err: approvals.ErrNoRequest},
		}},
		{"auto fails", approvals.Auto, []step{
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "report-failed", state: StateFailed, newKey: true},
			{do: "guard", state: StateFailed, verdict: Settled, newKey: true},
		}},
		{"approval approved", approvals.Approval, []step{
			{do: "report-succeeded", err: ErrNoPermit},
			{do: "guard", state: StatePending, verdict: RetryLater},
			{do: "guard", state: StatePending, verdict: RetryLater},
			{do: "self-approve", err: approvals.ErrSelfApproval},
			{do: "reconcile-executed", err: ErrNotUncertain},
			{do: "approve", state: StateApproved},
			{do: "approve", err: approvals.ErrAlreadyDecided},
			{do: "reject", err: approvals.ErrAlreadyDecided},
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "guard", state: StateExecuting, verdict: RetryLater},
			{do: "report-succeeded", state: StateSucceeded},
		}},
		{"approval rejected", approvals.Approval, []step{
			{do: "guard", state: StatePending, verdict: RetryLater},
			{do: "reject", state: StateRejected, newKey: true},
			{do: "guard", state: StateRejected, verdict: Denied, newKey: true},
			{do: "approve", err: approvals.ErrAlreadyDecided},
		}},
		{"approval expired", approvals.Approval, []step{
			{do: "guard", state: StatePending, verdict: RetryLater},
			{do: "wait-2h", state: StateExpired, newKey: true},
			{do: "guard", state: StateExpired, verdict: Denied, newKey: true},
			{do: "approve", err: approvals.ErrExpired},
		}},
		{"policy deny", approvals.Deny, []step{
			{do: "guard", state: StateDenied, verdict: Denied},
			{do: "guard", state: StateDenied, verdict: Denied},
			{do: "approve", err: approvals.ErrNoRequest},
		}},
		{"lease runs out, reconciled executed, late report disagrees", approvals.Auto, []step{
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "wait-16m", state: StateUncertain},
			{do: "guard", state: StateUncertain, verdict: Uncertain},
			{do: "reconcile-executed", state: StateReconciled},
			{do: "reconcile-executed", err: ErrNotUncertain},
			{do: "report-failed", state: StateReconciled},
			{do: "guard", state: StateReconciled, verdict: Settled},
		}},
		{"reported unknown, reconciled not executed", approvals.Auto, []step{
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "report-unknown", state: StateUncertain},
			{do: "report-succeeded", err: ErrReportDiffers},
			{do: "guard", state: StateUncertain, verdict: Uncertain},
			{do: "reconcile-not-executed", state: StateReconciled, newKey: true},
			{do: "guard", state: StateReconciled, verdict: Settled, newKey: true},
		}},
		{"late report before reconciliation", approvals.Auto, []step{
			{do: "guard", state: StateExecuting, verdict: Permitted},
			{do: "wait-20m", state: StateUncertain},
			{do: "report-succeeded", state: StateUncertain},
			{do: "reconcile-not-executed", state: StateReconciled, newKey: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := openTest(t)
			if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: tc.policy, TTL: time.Hour}, "root"); err != nil {
				t.Fatal(err)
			}
			const key = "refund:le-1"
			var permit string
			for i, st := range tc.steps {
				var state State
				var verdict Verdict
				var newKey bool
				var err error
				switch do := st.do; {
				case do == "guard":
					var a Answer
					a, err = s.Guard(ctx, key, pay, GuardOptions{Agent: "bot"})
					state, verdict, newKey = a.State, a.Verdict, a.SafeNewKey
					if a.PermitID != "" {
						permit = a.PermitID
					}
					// A permit is always fresh; a guard right after a guard
					// that created nothing new must say replayed.
					repeat := i > 0 && tc.steps[i-1].do == "guard"
					if a.Verdict == Permitted && a.Replayed || repeat && !a.Replayed {
						t.Fatalf("step %d: replayed=%v on verdict %s", i, a.Replayed, a.Verdict)
					}
				case do == "approve":
					_, err = s.Approve(ctx, key, "alice", "ok")
				case do == "self-approve":
					_, err = s.Approve(ctx, key, "bot", "")
				case do == "reject":
					_, err = s.Reject(ctx, key, "alice", "too large")
				case len(do) > 7 && do[:7] == "report-":
					var r ReportAnswer
					r, err = s.Report(ctx, key, permit, Outcome(do[7:]), ReportOptions{Ref: "prov-1", Latency: time.Second})
					state, newKey = r.State, r.SafeNewKey
				case len(do) > 10 && do[:10] == "reconcile-":
					var r Reconciliation
					r, err = s.Reconcile(ctx, key, Result(do[10:]), "alice", "checked the provider")
					newKey = r.SafeNewKey
				case len(do) > 5 && do[:5] == "wait-":
					d, _ := time.ParseDuration(do[5:])
					clk.Add(d)
				}
				if st.err != nil {
					if !errors.Is(err, st.err) {
						t.Fatalf("step %d %s: err %v, want %v", i, st.do, err, st.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d %s: %v", i, st.do, err)
				}
				d, err := s.Status(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if st.do == "approve" || st.do == "reject" || st.do[:4] == "wait" {
					newKey = d.SafeNewKey // these calls do not answer it
				}
				if d.State != st.state || state != "" && state != st.state || verdict != st.verdict || newKey != st.newKey || d.SafeNewKey != st.newKey {
					t.Fatalf("step %d %s: state %s/%s verdict %s safe_new_key %v, want %s %s %v", i, st.do, d.State, state, verdict, newKey, st.state, st.verdict, st.newKey)
				}
			}
			if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}

func TestReportRules(t *testing.T) {
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root")
	a, _ := s.Guard(ctx, "k", pay, GuardOptions{})
	if _, err := s.Report(ctx, "k", "00000000-0000-4000-8000-000000000000", Succeeded, ReportOptions{}); !errors.Is(err, ErrWrongPermit) {
		t.Fatalf("wrong permit: %v", err)
	}
	if _, err := s.Report(ctx, "k", a.PermitID, "done", ReportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad outcome: %v", err)
	}
	s.Report(ctx, "k", a.PermitID, Succeeded, ReportOptions{Ref: "r1"})
	if _, err := s.Report(ctx, "k", a.PermitID, Failed, ReportOptions{}); !errors.Is(err, ErrReportDiffers) {
		t.Fatalf("differing report: %v", err)
	}
	d, _ := s.Status(ctx, "k")
	if len(d.Reports) != 2 || d.Reports[0].Kind != "accepted" || d.Reports[1].Kind != "refused" || d.Reports[0].Ref != "r1" {
		t.Fatalf("reports = %+v", d.Reports)
	}
}

func TestLateReportDisagreementFlagged(t *testing.T) {
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root")
	a, _ := s.Guard(ctx, "k", pay, GuardOptions{Lease: time.Minute})
	clk.Add(2 * time.Minute)
	r, err := s.Report(ctx, "k", a.PermitID, Succeeded, ReportOptions{})
	if err != nil || !r.Late || r.State != StateUncertain {
		t.Fatalf("late report = %+v, %v", r, err)
	}
	rec, err := s.Reconcile(ctx, "k", "not-executed", "alice", "provider shows nothing")
	if err != nil || !rec.Disagrees {
		t.Fatalf("reconcile = %+v, %v", rec, err)
	}
	d, _ := s.Status(ctx, "k")
	if !d.Disagrees {
		t.Fatal("status does not flag the disagreement")
	}
}

func TestEpochFencing(t *testing.T) {
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Approval, TTL: time.Hour}, "root")
	if _, err := s.Guard(ctx, "old:pending", pay, GuardOptions{Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	e1, err := s.ActivateEpoch(ctx, "", "root")
	if err != nil {
		t.Fatal(err)
	}
	// The request pending under no epoch is fenced as the epoch changes,
	// before its agent asks again: the console lists it under Fenced.
	if rows, _ := s.Fenced(ctx, false, "", 0, 0); len(rows) != 1 || rows[0].Key != "old:pending" || !strings.Contains(rows[0].Reason, "was activated") {
		t.Fatalf("fenced at activation: %+v", rows)
	}
	var fe *FencedError
	if _, err := s.Guard(ctx, "never-admitted", pay, GuardOptions{Agent: "bot"}); !errors.As(err, &fe) {
		t.Fatalf("plain key under an active epoch: %v", err)
	}
	if _, err := s.Guard(ctx, "hsr1:"+e1.Epoch+":refund:le-1", pay, GuardOptions{Agent: "bot"}); err != nil {
		t.Fatalf("current epoch key: %v", err)
	}
	// The admitted old key can be read but neither approved (that
	// approval could never yield a permit) nor given a new permit.
	if _, err := s.Approve(ctx, "old:pending", "alice", ""); !errors.As(err, &fe) {
		t.Fatalf("approving a stale-epoch key: %v, want fenced", err)
	}
	if d, err := s.Status(ctx, "old:pending"); err != nil || d.Decision != nil || d.State != StatePending {
		t.Fatalf("after the fenced approval: %+v %v", d, err)
	}
	// A pending request of an epoch that is no longer active can never be
	// approved: waiting on it would be waiting for ever, so it is fenced,
	// on a retry as on the first call after the epoch changed.
	for range 2 {
		if a, err := s.Guard(ctx, "old:pending", pay, GuardOptions{Agent: "bot"}); !errors.As(err, &fe) || a.PermitID != "" || fe.ActiveEpoch != e1.Epoch {
			t.Fatalf("old admitted pending key: %+v %v, want fenced", a, err)
		}
	}
	e2, _ := s.ActivateEpoch(ctx, "", "root")
	if _, err := s.Guard(ctx, "hsr1:"+e1.Epoch+":refund:le-2", pay, GuardOptions{}); !errors.As(err, &fe) || fe.ActiveEpoch != e2.Epoch {
		t.Fatalf("stale epoch: %v", err)
	}
	if _, err := s.ActivateEpoch(ctx, e1.Epoch, "root"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("epoch reuse: %v", err)
	}
	rows, _ := s.Fenced(ctx, false, "", 0, 0)
	// The new key, the approval, two polls of the stale request, the stale
	// epoch; and at each activation every request then pending under
	// another epoch (old:pending at both, refund:le-1 of e1 at the second).
	if len(rows) != 8 {
		t.Fatalf("%d fenced calls logged, want 8", len(rows))
	}
	if _, err := s.Status(ctx, "never-admitted"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fenced key was admitted: %v", err)
	}
}

func TestListFiltersAndCounts(t *testing.T) {
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "email", Mode: approvals.Auto}, "root")
	for i := 0; i < 6; i++ {
		kind := "refund"
		if i%2 == 0 {
			kind = "email"
		}
		s.Guard(ctx, fmt.Sprintf("a:%d", i), Payload{kind, "t", "b"}, GuardOptions{Agent: fmt.Sprintf("agent-%d", i%3)})
	}
	s.Record(ctx, "b:1", pay, RecordOptions{})
	s.Record(ctx, "b:1", Payload{"x", "y", "z"}, RecordOptions{})
	tests := []struct {
		f    Filter
		want int
	}{
		{Filter{}, 7}, {Filter{State: StatePending}, 3}, {Filter{State: StateExecuting}, 3},
		{Filter{Kind: "email"}, 3}, {Filter{Agent: "agent-1"}, 2}, {Filter{KeyPrefix: "a:"}, 6},
		{Filter{KeyPrefix: "b"}, 1}, {Filter{State: StateRecorded}, 1}, {Filter{Text: "agent-2"}, 2},
		{Filter{Limit: 2}, 2}, {Filter{BeforeID: 3}, 2}, {Filter{Text: "acct-1"}, 1},
		// The text is literal and ignores case: _ and % are no wildcards.
		{Filter{Text: "AGENT-2"}, 2}, {Filter{Text: "agent_2"}, 0}, {Filter{Text: "a%1"}, 0}, {Filter{Text: `\`}, 0},
	}
	for _, tc := range tests {
		rows, err := s.List(ctx, tc.f)
		if err != nil || len(rows) != tc.want {
			t.Errorf("List(%+v) = %d rows, %v; want %d", tc.f, len(rows), err, tc.want)
		}
	}
	c, _ := s.Counts(ctx)
	next := c.Next
	c.Next = time.Time{}
	if c != (Counts{Pending: 3, Conflicts: 1, All: 7}) {
		t.Fatalf("counts = %+v", c)
	}
	// The earliest deadline ahead: the permits' leases (15 minutes)
	// before the approvals' (24 hours).
	if want := clk.Now().Add(DefaultLease); !next.Equal(want) {
		t.Fatalf("next deadline = %v, want %v", next, want)
	}
	clk.Add(time.Hour)
	c, _ = s.Counts(ctx)
	if c.Uncertain != 3 || c.Pending != 3 {
		t.Fatalf("after lease: %+v", c)
	}
	cs, _ := s.Conflicts(ctx, false, "", 0, 0)
	if err := s.ReviewConflict(ctx, cs[0].ID, "alice", "caller bug"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReviewConflict(ctx, cs[0].ID, "alice", "again"); !errors.Is(err, ErrAlreadyReviewed) {
		t.Fatalf("second review: %v", err)
	}
	if c, _ = s.Counts(ctx); c.Conflicts != 0 {
		t.Fatalf("reviewed conflict still counted: %+v", c)
	}
}

// TestGuardProperties drives random interleavings of every operation and a
// moving clock, and checks the invariants after each run.
func TestGuardProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	runs := 12
	if testing.Short() {
		runs = 3 // CI's race run, after the plain run has done all twelve
	}
	for run := 0; run < runs; run++ {
		s, clk := openTest(t)
		s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
		s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: 30 * time.Minute}, "root")
		s.SetPolicy(ctx, approvals.Rule{Pattern: "no", Mode: approvals.Deny}, "root")
		kinds := []string{"auto", "ask", "no"}
		permits := map[string]string{}
		lastRank := map[string]int{}
		hashes := map[string]string{}
		for op := 0; op < 300; op++ {
			key := fmt.Sprintf("k%d", rng.IntN(8))
			kind := kinds[len(key)%3]
			body := "b"
			if rng.IntN(10) == 0 {
				body = "other"
			}
			switch rng.IntN(7) {
			case 0, 1:
				a, err := s.Guard(ctx, key, Payload{kind, "t", body}, GuardOptions{Agent: "bot", Lease: 10 * time.Minute})
				var ce *ConflictError
				if err != nil && !errors.As(err, &ce) {
					t.Fatal(err)
				}
				if a.PermitID != "" {
					if permits[key] != "" {
						t.Fatalf("second permit for %s", key)
					}
					permits[key] = a.PermitID
				}
			case 2:
				s.Approve(ctx, key, "alice", "")
			case 3:
				s.Reject(ctx, key, "alice", "no")
			case 4:
				s.Report(ctx, key, permits[key], []Outcome{Succeeded, Failed, Unknown}[rng.IntN(3)], ReportOptions{})
			case 5:
				s.Reconcile(ctx, key, []Result{ResultExecuted, ResultNotExecuted}[rng.IntN(2)], "alice", "n")
			case 6:
				clk.Add(time.Duration(rng.IntN(20)) * time.Minute)
			}
			d, err := s.Status(ctx, key)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if h, ok := hashes[key]; ok && h != d.SHA256 {
				t.Fatalf("hash of %s changed", key)
			}
			hashes[key] = d.SHA256
			if r := rank(d.State); r < lastRank[key] {
				t.Fatalf("run %d op %d: %s moved back to %s", run, op, key, d.State)
			} else {
				lastRank[key] = r
			}
		}
		db := rawDB(t, s.Path())
		var bad int
		db.QueryRow(`SELECT (SELECT count(*) FROM (SELECT action_key FROM approval_requests GROUP BY action_key HAVING count(*) > 1))
			+ (SELECT count(*) FROM (SELECT action_key FROM decisions GROUP BY action_key HAVING count(*) > 1))
			+ (SELECT count(*) FROM (SELECT action_key FROM permits GROUP BY action_key HAVING count(*) > 1))
			+ (SELECT count(*) FROM (SELECT action_key FROM reports WHERE kind = 'accepted' GROUP BY action_key HAVING count(*) > 1))`).Scan(&bad)
		if bad != 0 {
			t.Fatalf("run %d: %d keys with duplicate requests, decisions, permits or final reports", run, bad)
		}
		if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
			t.Fatalf("verify: %+v %v", rep, err)
		}
	}
}

// rank orders states along the lifecycle; no state may move to a lower one.
func rank(s State) int {
	switch s {
	case StateRecorded:
		return 0
	case StatePending:
		return 1
	case StateApproved, StateRejected, StateExpired, StateDenied:
		return 2
	case StateExecuting:
		return 3
	case StateUncertain, StateSucceeded, StateFailed:
		return 4
	}
	return 5 // reconciled
}
