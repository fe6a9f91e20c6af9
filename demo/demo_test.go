package demo

import (
	"bytes"
	"os/exec"
	"runtime"
	"syscall"

	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

func TestMain(m *testing.M) {
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		ledger.SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
	}, func() int { return pgtest.Main(m) }))
}

// TestDemoFillsEveryView runs the simulated agents headless, sped up, and
// checks that each console view has something to show.
func TestDemoFillsEveryView(t *testing.T) {
	checkDemo(t, filepath.Join(t.TempDir(), "demo.db"))
}

// TestDemoOnPostgres: 'demo --db postgres://...' seeds and runs on a
// PostgreSQL ledger, and says where without the URL's password.
func TestDemoOnPostgres(t *testing.T) {
	u := pgtest.DB(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	checkDemo(t, u)
	os.Stderr = stderr
	w.Close()
	said, _ := io.ReadAll(r)
	if !strings.Contains(string(said), "demo ledger: postgres://") || strings.Contains(string(said), pgtest.Password) {
		t.Fatalf("the demo said %q", said)
	}
}

func checkDemo(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	if err := Run(ctx, Options{DB: path, Operator: "alice", Headless: 3 * time.Second, Speed: 0.1}); err != nil {
		t.Fatal(err)
	}
	s, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pending == 0 || c.Conflicts == 0 || c.Uncertain == 0 || c.Fenced == 0 || c.All < 5 {
		t.Fatalf("after the demo: %+v", c)
	}
	// The demo's hostile body is stored as sent, for the console to escape.
	rows, _ := s.List(ctx, ledger.Filter{Kind: "email.send", Limit: 50})
	hostile := false
	for _, r := range rows {
		d, _ := s.Status(ctx, r.Key)
		hostile = hostile || d.Payload != nil && len(d.Payload.Body) > 0 && d.Payload.Body[5] == 0x1b
	}
	if !hostile {
		t.Fatal("no hostile payload was recorded")
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// The demo signs with a scratch key: its operator is registered, the
	// rules it set are signed, so the auto rules it seeds grant.
	set, err := s.Operators(ctx)
	if err != nil || !set.Signed || len(set.Operators) != 1 || set.Operators[0].Name != "alice" {
		t.Fatalf("demo operators: %+v %v", set, err)
	}
	if rows, _ := s.List(ctx, ledger.Filter{Kind: "report.daily", Limit: 5}); len(rows) == 0 || rows[0].State == ledger.StatePending {
		t.Fatalf("the demo's signed auto rule did not grant: %+v", rows)
	}
}

// TestDemoRemovesItsScratchFolder: without --db the demo works in a new
// temporary folder and leaves nothing behind, WAL files included.
func TestDemoRemovesItsScratchFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := Run(context.Background(), Options{Operator: "alice", Headless: 500 * time.Millisecond, Speed: 0.1}); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil || len(left) != 0 {
		t.Fatalf("the demo left %v behind (%v)", left, err)
	}
}

// demoChild is the environment variable that makes TestDemoChild run the
// demo in this test binary, as a separate process for the signal tests.
const demoChild = "TOLLGATE_TEST_DEMO_CHILD"

// TestDemoChild is not a test on its own: TestDemoRemovesItsFolderOnSignal
// runs it in a child process, which it then signals.
func TestDemoChild(t *testing.T) {
	if os.Getenv(demoChild) == "" {
		t.Skip("run by TestDemoRemovesItsFolderOnSignal")
	}
	if err := Run(context.Background(), Options{Operator: "alice", Headless: time.Minute, Speed: 0.1}); err != nil {
		t.Fatal(err)
	}
}

// TestDemoRemovesItsFolderOnSignal: a demo process whose terminal closes
// (SIGHUP) or that is killed politely (SIGTERM) removes its scratch
// folder before it exits, as it does on a quit.
func TestDemoRemovesItsFolderOnSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGHUP")
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDemoChild$")
			cmd.Env = append(os.Environ(), demoChild+"=1", "TMPDIR="+tmp)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Wait until the demo's ledger is in its folder.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if m, _ := filepath.Glob(filepath.Join(tmp, "tollgate-demo-*", "ledger.db")); len(m) > 0 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the demo never created its ledger:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // the agents are running
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the demo did not exit on %v:\n%s", sig, out.String())
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
				t.Fatalf("after %v the demo left %v behind (%v):\n%s", sig, left, err, out.String())
			}
		})
	}
}

// TestDemoNeverWritesTheSharedWitness: with the shared witness's folder
// in place (as an install makes it; here the run's stand-in), the demo's
// scratch ledger, whose operator acts are signed, adds no head to it.
func TestDemoNeverWritesTheSharedWitness(t *testing.T) {
	if err := os.MkdirAll(filepath.Dir(ledger.SystemWitnessPath), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(ledger.SystemWitnessPath))
	if err := Run(context.Background(), Options{DB: filepath.Join(t.TempDir(), "demo.db"), Operator: "alice", Headless: 500 * time.Millisecond, Speed: 0.1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ledger.SystemWitnessPath); err == nil {
		b, _ := os.ReadFile(ledger.SystemWitnessPath)
		t.Fatalf("the demo wrote the shared witness:\n%s", b)
	}
}
