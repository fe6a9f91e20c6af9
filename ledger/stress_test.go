package ledger

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

var stressCycles = flag.Int("stress.cycles", 150, "guard/report cycles per stress worker (the full run uses 1000)")

const stressWorkers, stressKeys = 8, 2000

type stressResult struct {
	Guards    int      `json:"guards"`
	Permits   int      `json:"permits"`
	Reports   int      `json:"reports"`
	Conflicts int      `json:"conflicts"`
	Errors    []string `json:"errors"`
	Latencies []int64  `json:"latencies_us"`
}

// stressKey picks the worker's next key: even cycles a shared key, odd
// cycles one of its own.
func stressKey(id, i int) (string, string) {
	var n int
	if i%2 == 0 {
		n = (i*7 + id*13) % (stressKeys / 2)
	} else {
		per := stressKeys / 2 / stressWorkers
		n = stressKeys/2 + id*per + i%per
	}
	kind := "auto"
	if n%4 == 1 {
		kind = "ask"
	}
	return fmt.Sprintf("stress:k-%d", n), kind
}

func stressWorker(s *Store, id int) int {
	cycles, _ := strconv.Atoi(os.Getenv("TOLLGATE_CHILD_KEYS"))
	var r stressResult
	for i := 0; i < cycles; i++ {
		key, kind := stressKey(id, i)
		start := time.Now()
		a, err := s.Guard(ctx, key, Payload{kind, "t", "same body"}, GuardOptions{Agent: fmt.Sprintf("worker-%d", id)})
		r.Latencies = append(r.Latencies, time.Since(start).Microseconds())
		r.Guards++
		if err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("guard %s: %v", key, err))
			continue
		}
		if a.PermitID != "" {
			r.Permits++
			if _, err := s.Report(ctx, key, a.PermitID, Succeeded, ReportOptions{Ref: "x"}); err != nil {
				r.Errors = append(r.Errors, fmt.Sprintf("report %s: %v", key, err))
			} else {
				r.Reports++
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// stressApprover approves pending keys until its stop file appears.
func stressApprover(s *Store, stop string) int {
	name := "approver-" + os.Getenv("TOLLGATE_CHILD_ID")
	for {
		if _, err := os.Stat(stop); err == nil {
			return 0
		}
		rows, err := s.List(ctx, Filter{State: StatePending, Limit: 50})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, r := range rows {
			if _, err := s.Approve(ctx, r.Key, name, ""); err != nil && !errors.Is(err, approvals.ErrAlreadyDecided) {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stressConsole does what the console does on each refresh.
func stressConsole(s *Store, stop string) int {
	w, err := s.Watch(ctx)
	if err != nil {
		return 1
	}
	defer w.Close()
	for {
		if _, err := os.Stat(stop); err == nil {
			return 0
		}
		if changed, err := w.Changed(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		} else if changed {
			if _, err := s.Counts(ctx); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if _, err := s.List(ctx, Filter{Limit: 200}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStress runs 8 worker processes of guard/report cycles over 2,000
// keys, half shared, while a console process refreshes and two approver
// processes approve at once (each approval needs both: one vote per
// operator, one decision per key). `go test ./ledger -run Stress -stress.cycles 1000 -v`
// is the full run; CI runs the default short one.
func TestStress(t *testing.T) {
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
	// Two approvers deciding at once, each key needing both.
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2}, "root")
	stop := filepath.Join(t.TempDir(), "stop")
	side := func(mode, id string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TOLLGATE_CHILD="+mode, "TOLLGATE_CHILD_DB="+path, "TOLLGATE_CHILD_STOP="+stop, "TOLLGATE_CHILD_ID="+id)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	approvers := []*exec.Cmd{side("stress-approver", "1"), side("stress-approver", "2")}
	console := side("stress-console", "")
	start := time.Now()
	var wg sync.WaitGroup
	results := make([]stressResult, stressWorkers)
	for id := 0; id < stressWorkers; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "TOLLGATE_CHILD=stress", "TOLLGATE_CHILD_DB="+path,
				"TOLLGATE_CHILD_ID="+strconv.Itoa(id), "TOLLGATE_CHILD_KEYS="+strconv.Itoa(*stressCycles))
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("worker %d: %v", id, err)
				return
			}
			json.Unmarshal(out, &results[id])
		}(id)
	}
	wg.Wait()
	elapsed := time.Since(start)
	os.WriteFile(stop, nil, 0o600)
	for i, a := range approvers {
		if err := a.Wait(); err != nil {
			t.Errorf("approver %d: %v", i+1, err)
		}
	}
	if err := console.Wait(); err != nil {
		t.Errorf("console: %v", err)
	}
	var all []int64
	var guards, permits, reports int
	for id, r := range results {
		if len(r.Errors) > 0 {
			t.Fatalf("worker %d: %d errors, first: %s", id, len(r.Errors), r.Errors[0])
		}
		if r.Guards != *stressCycles {
			t.Fatalf("worker %d made %d guards", id, r.Guards)
		}
		all = append(all, r.Latencies...)
		guards, permits, reports = guards+r.Guards, permits+r.Permits, reports+r.Reports
	}
	db := rawDB(t, path)
	var bad int
	db.QueryRow(`SELECT
		(SELECT count(*) FROM permits p WHERE (SELECT count(*) FROM reports r WHERE r.action_key = p.action_key AND r.kind = 'accepted') != 1)
		+ (SELECT count(*) FROM intents i JOIN policy_evals e USING (action_key) WHERE e.mode = 'approval'
			AND (SELECT count(*) FROM approval_requests r WHERE r.action_key = i.action_key) != 1)
		+ (SELECT count(*) FROM intents i WHERE NOT EXISTS (SELECT 1 FROM payloads p WHERE p.action_key = i.action_key))
		+ (SELECT count(*) FROM decisions d WHERE d.decision = 'approved'
			AND (SELECT count(DISTINCT v.name_key) FROM votes v WHERE v.action_key = d.action_key AND v.decision = 'approved') != 2)
		+ (SELECT count(*) FROM approval_requests q WHERE NOT EXISTS (SELECT 1 FROM decisions d WHERE d.action_key = q.action_key)
			AND (SELECT count(*) FROM votes v WHERE v.action_key = q.action_key) > 1)`).Scan(&bad)
	var decided int
	db.QueryRow("SELECT count(*) FROM decisions").Scan(&decided)
	if decided == 0 {
		t.Fatal("the approvers decided nothing: the test proved nothing about them")
	}
	var npermits, nintents int
	db.QueryRow("SELECT (SELECT count(*) FROM permits), (SELECT count(*) FROM intents)").Scan(&npermits, &nintents)
	if bad != 0 || npermits != permits || reports != permits {
		t.Fatalf("%d keys break one-request/one-permit/one-report/one-decision-of-two-votes; %d permits stored, %d given, %d reports", bad, npermits, permits, reports)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	slices.Sort(all)
	p := func(q float64) time.Duration {
		return time.Duration(all[int(float64(len(all)-1)*q)]) * time.Microsecond
	}
	t.Logf("%d processes x %d cycles: %d guards, %d permits, %d keys in %v: %.0f guards/s; guard latency p50 %v, p99 %v",
		stressWorkers, *stressCycles, guards, permits, nintents, elapsed.Round(time.Millisecond), float64(guards)/elapsed.Seconds(), p(0.5), p(0.99))
}
