// Package clients_test runs the agent clients' own test suites against a
// freshly built tollgate binary, so `go test ./...` (the README's test
// command, and CI) exercises them with the code they drive.
package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
)

// buildTollgate builds the binary the clients run, once per test.
func buildTollgate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "tollgate")
	// Its shared witness and anchor are this test's, never the host's.
	places := hostguard.Places{Witness: filepath.Join(dir, "var-lib-tollgate", "witness"), Anchor: filepath.Join(dir, "etc-tollgate", "operators")}
	cmd := exec.Command("go", "build", "-ldflags", places.LDFlags(), "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tollgate: %v\n%s", err, out)
	}
	return bin
}

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		skipOrFail(t, "python3 is not installed: the Python client's tests cannot run here")
	}
	return py
}

// TestPythonClient runs clients/python's unittest suite: the seed's
// exit-and-retry cron pattern end to end, each exception, a crash inside
// the block, a lapsed lease, bad binaries.
func TestPythonClient(t *testing.T) {
	py := python(t)
	bin := buildTollgate(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-v", "-s", "python/tests")
	cmd.Env = append(os.Environ(), "TOLLGATE_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nOK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python client tests: %v\n%s", err, out)
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
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("TOLLGATE_REQUIRE_PYTHON") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
