package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
)

// call is one tollgate process a stress agent or operator ran, and what
// it answered.
type call struct {
	who    string
	args   []string
	key    string
	code   int
	out    map[string]any
	stderr string
	at     time.Time
}

// calls collects every process's answer from many goroutines.
type calls struct {
	mu  sync.Mutex
	all []call
}

func (c *calls) add(x call) {
	c.mu.Lock()
	c.all = append(c.all, x)
	c.mu.Unlock()
}

// tollgate runs the binary as run does, from any goroutine: it never
// calls t.Fatal, and a process it could not start answers code -1. It
// returns the exit code, stdout as one JSON object, and stderr.
func tollgate(ctx context.Context, db, home string, env []string, args ...string) (int, map[string]any, string) {
	code, out, stderr := tollgateRaw(ctx, db, home, env, args...)
	var m map[string]any
	json.Unmarshal(out, &m)
	return code, m, stderr
}

func tollgateRaw(ctx context.Context, db, home string, env []string, args ...string) (int, []byte, string) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "TOLLGATE_DB="+db, "TOLLGATE_OPERATOR=", "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "SSH_AUTH_SOCK=", "TOLLGATE_OPERATOR_KEY=", "TOLLGATE_OPERATORS_FILE="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return -1, nil, err.Error()
	}
	return code, out.Bytes(), errb.String()
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// TestPostgresFaultsSurvived is issue 26's stress: agent processes (the
// tollgate binary, a guard then a report per key, two agents on each
// key) and two operators approving, on a cluster of the test's own,
// while the test terminates the agents' sessions every 1.5 s, restarts
// the server with `pg_ctl restart -m immediate` twice, and cuts a
// long-lived agent's connection between its permit and its report.
// Afterwards every acknowledged fact is in the ledger (intents, requests,
// permits with the id the agent was given, decisions, reports), no key
// has two permits and none acknowledged as permitted was permitted
// again, every interrupted outcome is uncertain or settled once its lease
// has run out, verify is clean, and no process answered a fault with
// exit 1: only 0, 75 (safe to repeat, or pending/executing), 74 (commit
// unknown) and the ledger's own answers (6, 10; 4 for an operator whose
// quorum another met).
func TestPostgresFaultsSurvived(t *testing.T) {
	if testing.Short() {
		t.Skip("a 25 s stress of agent processes while PostgreSQL restarts and sessions are terminated: not under -short")
	}
	// It restarts a cluster of its own, so it runs once, in the PostgreSQL
	// run, not in the SQLite one nor again in the pooled one.
	if !onPostgres {
		t.Skip("a PostgreSQL stress: runs with TOLLGATE_TEST_BACKEND=postgres")
	}
	if a := os.Getenv("TOLLGATE_TEST_PG_ADMIN"); a != "" && a != os.Getenv("TOLLGATE_TEST_PG") {
		t.Skip("runs on a cluster of its own, once, in the direct PostgreSQL run")
	}
	// 32 agents as issue 26 asks. Each is a loop of processes, each
	// process a TLS handshake and a SCRAM login; on the 2 shared cores
	// this runs on, 32 keep the whole test near 60 s (TOLLGATE_PGFAULT_AGENTS
	// sets another count).
	agents := 32
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_PGFAULT_AGENTS")); err == nil && v >= 2 {
		agents = v &^ 1
	}
	const stressFor = 25 * time.Second
	// Long enough for a guard and its report under this load (the first
	// round of 32 processes takes seconds on two shared cores); a report
	// after the lease is kept as evidence and the key stays uncertain.
	const lease = 12 * time.Second
	c := pgtest.NewCluster(t)
	owner := c.DB(t)
	home := t.TempDir()
	homes.Store(owner, home)
	want(t, run(t, owner, "", "migrate"), cli.ExitOK)
	want(t, run(t, owner, "", "policy", "set", "job", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	want(t, run(t, owner, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h", "--operator", "root"), cli.ExitOK)
	// A login role per agent host (four hosts) and per operator.
	var hosts []string
	for h := range 4 {
		hosts = append(hosts, c.Role(t, owner, fmt.Sprintf("bot%d", h), "tollgate_agent"))
	}
	ops := map[string]string{"alice": c.Role(t, owner, "alice", "tollgate_operator"), "bob": c.Role(t, owner, "bob", "tollgate_operator")}
	dbName := strings.TrimPrefix(mustURL(t, owner).Path, "/")
	env := []string{"TOLLGATE_RETRY_FOR=20s"}

	var log calls
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stop := time.Now().Add(stressFor)
	var wg sync.WaitGroup

	// Agents: pair p's two agents guard the same keys, in the same order,
	// with the same payload; the one given the permit reports. Every
	// fourth key needs an operator's approval.
	for n := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, who := hosts[n%len(hosts)], fmt.Sprintf("agent%d", n)
			for i := 0; time.Now().Before(stop); i++ {
				kind := "job"
				if i%4 == 3 {
					kind = "refund"
				}
				key := fmt.Sprintf("%s:p%d-%d", kind, n/2, i)
				args := []string{"guard", key, "--json", "--agent", who, "--kind", kind, "--target", "acct", "--body", key, "--lease", lease.String()}
				var code int
				var out map[string]any
				for try := 0; ; try++ {
					var stderr string
					code, out, stderr = tollgate(ctx, db, home, env, args...)
					log.add(call{who, args, key, code, out, stderr, time.Now()})
					// Pending: ask again until an operator decides.
					if code != cli.ExitRetry || str(out, "state") != "pending" || try == 40 || time.Now().After(stop.Add(10*time.Second)) {
						break
					}
					time.Sleep(250 * time.Millisecond)
				}
				permit := str(out, "permit_id")
				if code != cli.ExitOK || permit == "" {
					continue
				}
				// The outcome, repeated while the answer says it is safe to
				// repeat (75) or the commit is unknown (74).
				rargs := []string{"report", key, "--json", "--permit", permit, "--outcome", "succeeded"}
				for try := 0; try < 3; try++ {
					code, out, stderr := tollgate(ctx, db, home, env, rargs...)
					log.add(call{who, rargs, key, code, out, stderr, time.Now()})
					if code != cli.ExitTempFail && code != cli.ExitCommitUnknown {
						break
					}
				}
			}
		}()
	}
	// Operators: alice approves the even pairs' requests, bob the odd
	// ones', so that an operator's "already decided" can only be a replay.
	for name, db := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parity := map[string]int{"alice": 0, "bob": 1}[name]
			for time.Now().Before(stop.Add(5 * time.Second)) {
				largs := []string{"list", "--state", "pending", "--json"}
				code, b, stderr := tollgateRaw(ctx, db, home, env, largs...)
				log.add(call{who: name, args: largs, code: code, stderr: stderr, at: time.Now()})
				var pending []struct {
					Key string `json:"key"`
				}
				json.Unmarshal(b, &pending)
				for _, p := range pending {
					var pair, i int
					if _, err := fmt.Sscanf(p.Key, "refund:p%d-%d", &pair, &i); err != nil || pair%2 != parity {
						continue
					}
					aargs := []string{"approve", p.Key, "--json", "--operator", name}
					code, out, stderr := tollgate(ctx, db, home, env, aargs...)
					log.add(call{name, aargs, p.Key, code, out, stderr, time.Now()})
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}

	// (c) A long-lived agent (one process holding its connections, as
	// the MCP server or a daemon does): its sessions are terminated after
	// each permit, before its report; every other key it abandons, as an
	// agent that died with its connection would.
	cutURL := withParam(hosts[0], "application_name", "tollgate-cut")
	type cutKey struct {
		key, permit string
		reported    bool
		late        bool
		err         error
	}
	var cuts []cutKey
	cutsTerminated := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		s, err := ledger.Open(ctx, cutURL, ledger.Options{RetryFor: 20 * time.Second})
		if err != nil {
			cuts = append(cuts, cutKey{err: fmt.Errorf("open: %w", err)})
			return
		}
		defer s.Close()
		for i := 0; time.Now().Before(stop); i++ {
			key := fmt.Sprintf("job:cut-%d", i)
			a, err := s.Guard(ctx, key, ledger.Payload{Kind: "job", Target: "acct", Body: key}, ledger.GuardOptions{Agent: "cutter", Lease: lease})
			if err != nil || a.PermitID == "" {
				cuts = append(cuts, cutKey{key: key, err: fmt.Errorf("guard: %v %+v", err, a)})
				continue
			}
			k, _ := c.Terminate(ctx, "application_name = 'tollgate-cut'")
			cutsTerminated += k
			ck := cutKey{key: key, permit: a.PermitID}
			if i%2 == 0 {
				r, err := s.Report(ctx, key, a.PermitID, ledger.Succeeded, ledger.ReportOptions{})
				ck.reported, ck.late, ck.err = err == nil, r.Late, err
			}
			cuts = append(cuts, ck)
			time.Sleep(300 * time.Millisecond)
		}
	}()

	// (a) and (b): the faults.
	terminated, restarts := 0, 0
	var faultErrs []error
	wg.Add(1)
	go func() {
		defer wg.Done()
		restartAt := []time.Duration{8 * time.Second, 17 * time.Second}
		start := time.Now()
		for time.Now().Before(stop) {
			time.Sleep(1500 * time.Millisecond)
			if len(restartAt) > 0 && time.Since(start) >= restartAt[0] {
				restartAt = restartAt[1:]
				t0 := time.Now()
				if err := c.Restart("immediate"); err != nil {
					faultErrs = append(faultErrs, err)
				} else {
					restarts++
					t.Logf("pg_ctl restart -m immediate at %s took %s", t0.Sub(start).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
				}
				continue
			}
			if n, err := c.Terminate(ctx, fmt.Sprintf("usename LIKE '%s_bot%%'", dbName)); err == nil {
				terminated += n
			}
		}
	}()
	wg.Wait()
	if len(faultErrs) > 0 {
		t.Fatalf("the faults could not be injected: %v", faultErrs)
	}

	// What each process answered.
	codes := map[string]map[int]int{}
	var permits []call // guard answers that gave a permit
	pendingAck := map[string]bool{}
	reported := map[string]call{}
	approved := map[string]string{}
	replayedDecisions := map[string]string{}
	keys := map[string]bool{}
	for _, x := range log.all {
		cmd := x.args[0]
		if codes[cmd] == nil {
			codes[cmd] = map[int]int{}
		}
		codes[cmd][x.code]++
		allowed := map[string][]int{
			"guard":   {cli.ExitOK, cli.ExitRetry, cli.ExitCommitUnknown, cli.ExitUncertain, cli.ExitSettled},
			"report":  {cli.ExitOK, cli.ExitTempFail, cli.ExitCommitUnknown},
			"approve": {cli.ExitOK, cli.ExitTempFail, cli.ExitCommitUnknown, cli.ExitConflict},
			"list":    {cli.ExitOK, cli.ExitTempFail},
		}[cmd]
		ok := false
		for _, a := range allowed {
			ok = ok || a == x.code
		}
		// A report after the lease answers 6 (uncertain) and is kept.
		ok = ok || (cmd == "report" && x.code == cli.ExitUncertain && x.out["late"] == true)
		if !ok {
			t.Errorf("%s: tollgate %s: exit %d: %s", x.who, strings.Join(x.args, " "), x.code, x.stderr)
		}
		if x.key != "" && x.out["safe_to_repeat"] != true && x.code != -1 {
			keys[x.key] = true
		}
		switch {
		case cmd == "guard" && x.code == cli.ExitOK:
			permits = append(permits, x)
		case cmd == "guard" && x.code == cli.ExitRetry && str(x.out, "state") == "pending":
			pendingAck[x.key] = true
		case cmd == "report" && (x.code == cli.ExitOK || x.code == cli.ExitUncertain):
			reported[x.key] = x
		case cmd == "approve" && x.code == cli.ExitOK:
			approved[x.key] = x.who
		case cmd == "approve" && x.code == cli.ExitConflict:
			replayedDecisions[x.key] = x.who
		}
	}
	t.Logf("%d agents, %d processes in %s; %d sessions terminated, %d restarts, %d cut; exit codes: %v",
		agents, len(log.all), stressFor, terminated, restarts, cutsTerminated, codes)
	if restarts != 2 || terminated == 0 || cutsTerminated == 0 {
		t.Fatalf("faults injected: %d restarts, %d sessions terminated, %d cut: the stress did not exercise them", restarts, terminated, cutsTerminated)
	}
	if len(permits) < agents {
		t.Fatalf("only %d permits in %s for %d agents", len(permits), stressFor, agents)
	}

	// Every lease has run out: interrupted outcomes are now uncertain.
	var last time.Time
	for _, p := range permits {
		if p.at.After(last) {
			last = p.at
		}
	}
	time.Sleep(time.Until(last.Add(lease + time.Second)))

	s, err := ledger.Open(ctx, owner, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	issued := map[string][]string{}
	rows, err := db.QueryContext(ctx, "SELECT action_key, permit_id FROM permits")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, p string
		rows.Scan(&k, &p)
		issued[k] = append(issued[k], p)
	}
	rows.Close()
	for k, ps := range issued {
		if len(ps) != 1 {
			t.Errorf("%s has %d permits: %v", k, len(ps), ps)
		}
	}
	// Each acknowledged permit is the key's only one: no key acknowledged
	// as permitted was permitted again, to the other agent or the same.
	given := map[string]string{}
	for _, p := range permits {
		id := str(p.out, "permit_id")
		if prev, ok := given[p.key]; ok {
			t.Errorf("%s permitted twice: %s, then %s to %s", p.key, prev, id, p.who)
		}
		given[p.key] = id
		if got := issued[p.key]; len(got) != 1 || got[0] != id {
			t.Errorf("%s: %s was given permit %s; the ledger holds %v", p.key, p.who, id, got)
		}
	}
	for k := range keys {
		d, err := s.Status(ctx, k)
		if err != nil {
			t.Errorf("%s was acknowledged and is not in the ledger: %v", k, err)
			continue
		}
		switch {
		case pendingAck[k] && d.Requested.IsZero():
			t.Errorf("%s: a pending request was acknowledged; the ledger holds none", k)
		case approved[k] != "" && (d.Decision == nil || d.Decision.Operator != approved[k]):
			t.Errorf("%s: %s's approval was acknowledged; the ledger's decision is %+v", k, approved[k], d.Decision)
		case replayedDecisions[k] != "" && (d.Decision == nil || d.Decision.Operator != replayedDecisions[k]):
			// Each operator approves only its own pairs' keys: "already
			// decided" can only be its own decision, committed by an
			// attempt whose answer was lost.
			t.Errorf("%s: %s was told 'already decided'; the ledger's decision is %+v", k, replayedDecisions[k], d.Decision)
		}
		if r, ok := reported[k]; ok {
			wantState := ledger.StateSucceeded
			if r.out["late"] == true {
				wantState = ledger.StateUncertain
			}
			if d.State != wantState {
				t.Errorf("%s: the report was acknowledged (late %v); state %s", k, r.out["late"], d.State)
			}
		}
		if len(issued[k]) > 0 && d.State != ledger.StateSucceeded && d.State != ledger.StateUncertain {
			t.Errorf("%s: permit issued, lease over; state %s, want uncertain or settled", k, d.State)
		}
	}
	// The cut agent: a report after the cut was acknowledged and stored,
	// or it failed with a classified error; either way the key is settled
	// or uncertain, and never permitted again.
	a, err := ledger.Open(ctx, hosts[1], ledger.Options{RetryFor: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	interrupted := 0
	for _, ck := range cuts {
		if ck.permit == "" {
			t.Errorf("cut agent: %s: %v", ck.key, ck.err)
			continue
		}
		if ck.err != nil && !errors.Is(ck.err, ledger.ErrUnavailable) && !errors.Is(ck.err, ledger.ErrCommitUnknown) {
			t.Errorf("cut agent: the report of %s after its connection was cut: %v", ck.key, ck.err)
		}
		d, err := s.Status(ctx, ck.key)
		switch {
		case err != nil:
			t.Errorf("cut agent: %s: %v", ck.key, err)
		case ck.reported && !ck.late && d.State != ledger.StateSucceeded:
			t.Errorf("cut agent: %s reported after the cut; state %s", ck.key, d.State)
		case ck.late && d.State != ledger.StateUncertain:
			t.Errorf("cut agent: %s reported after the cut and its lease; state %s", ck.key, d.State)
		case !ck.reported && d.State != ledger.StateUncertain && d.State != ledger.StateSucceeded:
			t.Errorf("cut agent: %s interrupted; state %s, want uncertain or settled", ck.key, d.State)
		case d.PermitID != ck.permit:
			t.Errorf("cut agent: %s was given %s; the ledger's permit is %s", ck.key, ck.permit, d.PermitID)
		}
		if !ck.reported {
			interrupted++
		}
	}
	// Interrupted keys (abandoned, or whose report never came back) are
	// asked again: uncertain or settled, never a new permit.
	var again []string
	for k := range issued {
		if _, ok := reported[k]; !ok {
			again = append(again, k)
		}
	}
	sort.Strings(again)
	for _, k := range again {
		body := k
		ans, err := a.Guard(ctx, k, ledger.Payload{Kind: strings.SplitN(k, ":", 2)[0], Target: "acct", Body: body}, ledger.GuardOptions{Agent: "late-agent"})
		if err != nil || ans.PermitID != "" || (ans.Verdict != ledger.Uncertain && ans.Verdict != ledger.Settled) {
			t.Errorf("%s asked again after an interrupted outcome: %+v %v", k, ans, err)
		}
	}
	t.Logf("%d keys, %d permits (%d acknowledged), %d reports acknowledged, %d approvals, %d interrupted outcomes asked again, %d cut-agent keys abandoned, %d decisions answered 'already decided' to their own operator",
		len(keys), len(issued), len(permits), len(reported), len(approved), len(again), interrupted, len(replayedDecisions))
	r := run(t, owner, "", "verify", "--json")
	want(t, r, cli.ExitOK)
	if m := r.json(t); m["ok"] != true {
		t.Fatalf("verify: %v", m)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func withParam(s, k, v string) string {
	u, _ := url.Parse(s)
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}
