package clients_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkPythonGuard times the Python client's guard of a new key over
// HTTP (Client(url=...) on `tollgate serve`'s socket, one kept-alive
// connection) against the same client spawning the CLI (Client(binary,
// db=...)), both on one SQLite ledger, interleaved round by round in one
// Python process. Each iteration is one round: one guard each way. It
// reports the medians and their ratio (SPEC 12's goal: at most 0.2).
//
//	go test ./clients -run '^$' -bench PythonGuard -benchtime 60x
func BenchmarkPythonGuard(b *testing.B) {
	py := python(b)
	dir := b.TempDir()
	db := filepath.Join(dir, "ledger.db")
	env := cleanEnv(dir)
	tollgate(b, env, "--db", db, "policy", "set", "report.*", "--mode", "auto")
	me, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	// No per-agent rate: the bound would time the limiter, not the call.
	serve := exec.Command(bin, "--db", db, "serve", "--listen", "unix:"+sock, "--socket-user", me.Username, "--rate", "0")
	serve.Env = env
	stderr, err := serve.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
	})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "tollgate serve: listening on ") {
				listening <- ""
			}
		}
		listening <- log.String()
	}()
	select {
	case log := <-listening:
		if log != "" {
			b.Fatalf("serve exited:\n%s", log)
		}
	case <-time.After(30 * time.Second):
		b.Fatal("serve did not listen")
	}

	driver := exec.Command(py, "python/tests/bench_guard.py", "python/src", "unix://"+sock, bin, db)
	driver.Env = append(env, "PYTHONDONTWRITEBYTECODE=1")
	driver.Stderr = os.Stderr
	in, err := driver.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := driver.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := driver.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewScanner(outPipe)
	var overHTTP, spawning []float64
	b.ResetTimer()
	for range b.N {
		fmt.Fprintln(in, "round")
		if !out.Scan() {
			b.Fatalf("the driver stopped: %v", driver.Wait())
		}
		var h, s int64
		if _, err := fmt.Sscan(out.Text(), &h, &s); err != nil {
			b.Fatalf("driver said %q: %v", out.Text(), err)
		}
		overHTTP, spawning = append(overHTTP, float64(h)/1e6), append(spawning, float64(s)/1e6)
	}
	b.StopTimer()
	in.Close()
	if err := driver.Wait(); err != nil {
		b.Fatalf("driver: %v", err)
	}
	mh, ms := median(overHTTP), median(spawning)
	b.ReportMetric(mh, "http-ms/guard")
	b.ReportMetric(ms, "spawn-ms/guard")
	b.ReportMetric(mh/ms, "http/spawn")
}

// median is the middle of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// cleanEnv is this process's environment without what would point a
// command elsewhere (a service, another ledger, the host's keys), its
// config and state in dir.
func cleanEnv(dir string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TOLLGATE_") && !strings.HasPrefix(e, "XDG_") && !strings.HasPrefix(e, "SSH_AUTH_SOCK=") {
			env = append(env, e)
		}
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"))
}

// tollgate runs the binary and fails on an error.
func tollgate(b testing.TB, env []string, args ...string) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("tollgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
