package ledger

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// TestMain lets the test binary act as a separate agent process: the
// multi-process tests re-execute it with TOLLGATE_CHILD set.
// The shared witness and the anchor are a temporary folder's, for the
// children too, and the run fails if it touched the host's (hostguard).
func TestMain(m *testing.M) {
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
	}, func() int {
		if mode := os.Getenv("TOLLGATE_CHILD"); mode != "" {
			return childMain(mode)
		}
		return pgtest.Main(m)
	}))
}

type childResult struct {
	Key       string `json:"key"`
	Created   bool   `json:"created,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
	Conflict  bool   `json:"conflict,omitempty"`
	Verdict   string `json:"verdict,omitempty"`
	Requested bool   `json:"requested,omitempty"`
	Permit    string `json:"permit,omitempty"`
	Decided   string `json:"decided,omitempty"`
	Err       string `json:"err,omitempty"`
}

// childMain runs one worker process and prints one JSON line per call.
func childMain(mode string) int {
	path := os.Getenv("TOLLGATE_CHILD_DB")
	id, _ := strconv.Atoi(os.Getenv("TOLLGATE_CHILD_ID"))
	if m, ok := strings.CutPrefix(mode, "contend-"); ok {
		until, _ := strconv.ParseInt(os.Getenv("TOLLGATE_CHILD_UNTIL"), 10, 64)
		return contendChild(m, path, id, time.UnixMilli(until))
	}
	if mode == "seal" {
		keys, _ := strconv.Atoi(os.Getenv("TOLLGATE_CHILD_KEYS"))
		return sealChild(path, id, keys)
	}
	if mode == "openclose" {
		return openCloseChild(path, id)
	}
	if mode == "archive" {
		return archiveChild(path, os.Getenv("TOLLGATE_CHILD_ARCHIVE"))
	}
	keys, _ := strconv.Atoi(os.Getenv("TOLLGATE_CHILD_KEYS"))
	s, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	switch mode {
	case "crash":
		return crashChild(s, id)
	case "stress":
		return stressWorker(s, id)
	case "stress-approver":
		return stressApprover(s, os.Getenv("TOLLGATE_CHILD_STOP"))
	case "stress-console":
		return stressConsole(s, os.Getenv("TOLLGATE_CHILD_STOP"))
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for i := 0; i < keys; i++ {
		// Walk the keys in a different order in each process.
		n := (i*7 + id*31) % keys
		key := fmt.Sprintf("race:key-%d", n)
		p := Payload{Kind: "refund", Target: "acct", Body: "same"}
		if n%2 == 1 {
			p.Body = fmt.Sprintf("process-%d", id) // half the keys conflict
		}
		r := childResult{Key: key}
		switch mode {
		case "record":
			in, err := s.Record(ctx, key, p, RecordOptions{Agent: fmt.Sprintf("p%d", id)})
			r.Created, r.Replayed = in.Created, in.Replayed
			var ce *ConflictError
			if errors.As(err, &ce) {
				r.Conflict, err = true, nil
			}
			if err != nil {
				r.Err = err.Error()
			}
		case "guard":
			a, err := s.Guard(ctx, key, Payload{Kind: "refund", Target: "acct", Body: "same"}, GuardOptions{Agent: fmt.Sprintf("p%d", id)})
			r.Verdict, r.Replayed, r.Permit = string(a.Verdict), a.Replayed, a.PermitID
			r.Requested = a.State == StatePending && !a.Replayed
			if err != nil {
				r.Err = err.Error()
			}
		case "decide":
			var err error
			if n%3 == 0 {
				_, err = s.Reject(ctx, key, "operator", "not now")
				r.Decided = "rejected"
			} else {
				_, err = s.Approve(ctx, key, "operator", "")
				r.Decided = "approved"
			}
			if err != nil {
				r.Decided, r.Err = "", err.Error()
			}
		}
		enc.Encode(r)
	}
	return 0
}

// childCmd is this test binary run as a child process in mode on the
// ledger at path, with env added.
func childCmd(mode, path string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "TOLLGATE_CHILD="+mode, "TOLLGATE_CHILD_DB="+path), env...)
	return cmd
}

// runChildren starts n copies of the test binary in mode and collects
// their JSON lines.
func runChildren(t *testing.T, path, mode string, n, keys int, firstID int) [][]childResult {
	t.Helper()
	out := make([][]childResult, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := childCmd(mode, path, "TOLLGATE_CHILD_ID="+strconv.Itoa(firstID+i), "TOLLGATE_CHILD_KEYS="+strconv.Itoa(keys))
			b, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", i, err)
				return
			}
			sc := bufio.NewScanner(stringsReader(b))
			for sc.Scan() {
				var r childResult
				json.Unmarshal(sc.Bytes(), &r)
				out[i] = append(out[i], r)
			}
		}(i)
	}
	wg.Wait()
	return out
}

func TestMultiProcessRecord(t *testing.T) {
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const procs, keys = 4, 200
	res := runChildren(t, path, "record", procs, keys, 0)
	created := map[string]int{}
	for i, rs := range res {
		if len(rs) != keys {
			t.Fatalf("process %d made %d calls, want %d", i, len(rs), keys)
		}
		for _, r := range rs {
			switch {
			case r.Err != "":
				t.Fatalf("process %d key %s: unexpected error %s", i, r.Key, r.Err)
			case r.Created:
				created[r.Key]++
			case !r.Replayed:
				t.Fatalf("process %d key %s: neither created nor replayed: %+v", i, r.Key, r)
			}
		}
	}
	for k := 0; k < keys; k++ {
		if n := created[fmt.Sprintf("race:key-%d", k)]; n != 1 {
			t.Fatalf("key %d created %d times", k, n)
		}
	}
	var conflicts int
	rawDB(t, path).QueryRow("SELECT count(*) FROM conflicts").Scan(&conflicts)
	if conflicts != keys/2*(procs-1) {
		t.Fatalf("%d conflicts logged, want %d", conflicts, keys/2*(procs-1))
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.Intents != keys {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
}

func TestMultiProcessGuardAndDecide(t *testing.T) {
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keys = 100
	// Round 1: 4 processes guard the same keys; each key gets one request.
	res := runChildren(t, path, "guard", 4, keys, 0)
	requests := map[string]int{}
	for _, rs := range res {
		for _, r := range rs {
			if r.Err != "" || r.Verdict != string(RetryLater) {
				t.Fatalf("round 1 %s: %+v", r.Key, r)
			}
			if r.Requested {
				requests[r.Key]++
			}
		}
	}
	// Round 2: 4 guard processes race one that approves and rejects.
	var wg sync.WaitGroup
	var guards, decides [][]childResult
	wg.Add(2)
	go func() { defer wg.Done(); guards = runChildren(t, path, "guard", 4, keys, 10) }()
	go func() { defer wg.Done(); decides = runChildren(t, path, "decide", 1, keys, 0) }()
	wg.Wait()
	permits := map[string]int{}
	for _, rs := range guards {
		for _, r := range rs {
			if r.Err != "" {
				t.Fatalf("round 2 guard %s: %s", r.Key, r.Err)
			}
			if r.Permit != "" {
				permits[r.Key]++
			}
		}
	}
	for _, r := range decides[0] {
		if r.Err != "" {
			t.Fatalf("decide %s: %s", r.Key, r.Err)
		}
	}
	// Round 3: guard again after every decision; approved keys not yet
	// permitted get their one permit now.
	for _, rs := range runChildren(t, path, "guard", 4, keys, 20) {
		for _, r := range rs {
			if r.Permit != "" {
				permits[r.Key]++
			}
		}
	}
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("race:key-%d", k)
		wantPermit := 1
		if k%3 == 0 {
			wantPermit = 0
		}
		if requests[key] != 1 || permits[key] != wantPermit {
			t.Fatalf("key %s: %d requests, %d permits (want 1, %d)", key, requests[key], permits[key], wantPermit)
		}
	}
	db := rawDB(t, path)
	var nreq, ndec, nperm int
	db.QueryRow("SELECT (SELECT count(*) FROM approval_requests), (SELECT count(*) FROM decisions), (SELECT count(*) FROM permits)").Scan(&nreq, &ndec, &nperm)
	if nreq != keys || ndec != keys || nperm != keys-(keys+2)/3 {
		t.Fatalf("rows: %d requests, %d decisions, %d permits", nreq, ndec, nperm)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
}
