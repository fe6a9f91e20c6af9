// Package clients_test runs the agent clients' own test suites against a
// freshly built tollgate binary, so `go test ./...` (the README's test
// command, and CI) exercises them with the code they drive.
package clients_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// bin is the tollgate binary the clients run (and the Python suite's
// tests start as `tollgate serve`), built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	// The binary is built with a temporary folder's shared witness and
	// anchor, and the run fails if it touched the host's.
	os.Exit(hostguard.Main(func(hostguard.Places) {}, func() int {
		dir, err := os.MkdirTemp("", "tollgate-clients")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		places := hostguard.Places{Witness: filepath.Join(dir, "var-lib-tollgate", "witness"), Anchor: filepath.Join(dir, "etc-tollgate", "operators")}
		bin = filepath.Join(dir, "tollgate")
		cmd := exec.Command("go", "build", "-ldflags", places.LDFlags(), "-o", bin, "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build tollgate: %v\n%s", err, out)
			return 1
		}
		return pgtest.Main(m)
	}))
}

func python(t testing.TB) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		skipOrFail(t, "python3 is not installed: the Python client's tests cannot run here")
	}
	return py
}

// TestPythonClient runs clients/python's unittest suite: over the binary,
// the seed's exit-and-retry cron pattern end to end, each exception, a
// crash inside the block, a lapsed lease, bad binaries; over the service
// (a real `tollgate serve` on a socket, TCP with tokens and HTTPS), the
// same answers as the binary's, a revoked token, a dropped answer given
// again to its attempt, agent processes at once, and the retries. With
// TOLLGATE_TEST_PG set, the service's tests run on PostgreSQL too.
func TestPythonClient(t *testing.T) {
	py := python(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-v", "-s", "python/tests")
	cmd.Env = append(os.Environ(), "TOLLGATE_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	if os.Getenv("TOLLGATE_TEST_PG") != "" {
		cmd.Env = append(cmd.Env, "TOLLGATE_PY_TEST_PG="+pgtest.DB(t))
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nOK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python client tests: %v\n%s", err, out)
	}
	for _, suite := range []string{"ClientTest", "ServiceTest", "TLSServiceTest", "RetryTest"} {
		if !strings.Contains(string(out), "."+suite+".") {
			t.Fatalf("python client tests: the suite %s did not run\n%s", suite, out)
		}
	}
	if os.Getenv("TOLLGATE_TEST_PG") != "" && !strings.Contains(string(out), ".PostgresServiceTest.") {
		t.Fatalf("python client tests: TOLLGATE_TEST_PG is set and the PostgreSQL suite did not run\n%s", out)
	}
	t.Logf("%s", out)
}

// TestPythonClientInstalls: `pip install ./clients/python` gives the
// import name with its py.typed marker, with no network (--no-index):
// the build backend is in the tree and needs nothing but the standard
// library.
func TestPythonClientInstalls(t *testing.T) {
	py := python(t)
	if exec.Command(py, "-m", "pip", "--version").Run() != nil {
		skipOrFail(t, "pip is missing: the install check cannot run here")
	}
	target := t.TempDir()
	cmd := exec.Command(py, "-m", "pip", "install", "--quiet", "--no-index", "--target", target, "./python")
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install ./clients/python: %v\n%s", err, out)
	}
	check := exec.Command(py, "-c", "import tollgate_guard, os; print(tollgate_guard.__file__); "+
		"assert os.path.exists(os.path.join(os.path.dirname(tollgate_guard.__file__), 'py.typed')); "+
		"from tollgate_guard import Client, ApprovalPending, ActionDenied, OutcomeUncertain, AlreadySettled, KeyConflict, NotPermitted, InvalidInput, TollgateError")
	check.Dir = t.TempDir()
	check.Env = append(os.Environ(), "PYTHONPATH="+target, "PYTHONDONTWRITEBYTECODE=1")
	out, err := check.CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), target) {
		t.Fatalf("the installed client does not import from %s: %v\n%s", target, err, out)
	}
}

// skipOrFail skips on a developer's machine without Python, and fails in
// CI (.ci/run sets TOLLGATE_REQUIRE_PYTHON), where the client must be tested.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("TOLLGATE_REQUIRE_PYTHON") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
