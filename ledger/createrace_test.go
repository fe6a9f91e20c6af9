package ledger

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// createRaceEnv, when set, makes this test binary one of the processes of
// TestCreateRace (the value is its number); TOLLGATE_CHILD cannot be used,
// since TestMain hands that to childMain, which opens the ledger before a
// barrier could hold it.
const createRaceEnv = "TOLLGATE_CREATE_RACE_CHILD"

type createRaceResult struct {
	LedgerID  string `json:"ledger_id"`
	Requested bool   `json:"requested"`
	Verdict   string `json:"verdict"`
	Err       string `json:"err,omitempty"`
}

// TestCreateRaceChild is one process of TestCreateRace: it says it is
// ready, waits until its stdin closes (the parent closes all of them at
// once), then opens a writer store on the missing ledger and guards one
// key.
func TestCreateRaceChild(t *testing.T) {
	id := os.Getenv(createRaceEnv)
	if id == "" {
		t.Skip("a child process of TestCreateRace")
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	n, _ := strconv.Atoi(id)
	var r createRaceResult
	// Half the processes are one-shot, as the CLI opens a writer.
	s, err := Open(ctx, os.Getenv("TOLLGATE_CHILD_DB"), Options{OneShot: n%2 == 0})
	if err == nil {
		var a Answer
		a, err = s.Guard(ctx, "race:create", Payload{Kind: "refund", Target: "acct", Body: "same"}, GuardOptions{Agent: "p" + id})
		r.Verdict, r.Requested = string(a.Verdict), a.State == StatePending && !a.Replayed
		if err == nil {
			var h Head
			h, err = s.Head(ctx)
			r.LedgerID = h.LedgerID
		}
		s.Close()
	}
	if err != nil {
		r.Err = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// TestCreateRace starts sixteen processes that each create the same
// missing ledger (and its missing folder) at once: every one must succeed
// on the one file, with one ledger id and one approval request for the key.
func TestCreateRace(t *testing.T) {
	sqliteOnly(t)
	const procs = 16
	path := filepath.Join(t.TempDir(), "l", "ledger.db")
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	kids := make([]child, procs)
	for i := range kids {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCreateRaceChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), createRaceEnv+"="+strconv.Itoa(i), "TOLLGATE_CHILD_DB="+path)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kids[i] = child{cmd, stdin, bufio.NewReader(stdout)}
		defer cmd.Process.Kill()
	}
	for i, k := range kids {
		if line, err := k.out.ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Fatalf("process %d: %q, %v", i, line, err)
		}
	}
	for _, k := range kids { // release them all at once
		k.stdin.Close()
	}
	ids := map[string]int{}
	requested := 0
	for i, k := range kids {
		var r createRaceResult
		var rest strings.Builder
		sc := bufio.NewScanner(k.out)
		for sc.Scan() {
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				rest.WriteString(sc.Text() + "\n")
			}
		}
		if err := k.cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, rest.String())
		}
		if r.Err != "" {
			t.Errorf("process %d: %s", i, r.Err)
			continue
		}
		ids[r.LedgerID]++
		if r.Requested {
			requested++
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(ids) != 1 {
		t.Fatalf("ledger ids %v, want one", ids)
	}
	if requested != 1 {
		t.Fatalf("%d processes made the approval request, want 1", requested)
	}
	s, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.Intents != 1 || ids[rep.LedgerID] != procs {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".tollgate-new-*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left beside the ledger: %v", left)
	}
}
