package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestREADMEShellExample runs the README's shell agent, as written, three
// times around an approval: it must wait, then act exactly once, then
// refuse to act again.
func TestREADMEShellExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "exit-and-retry pattern, in shell")
	if !ok {
		t.Fatal("README lost its shell example")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, _ := strings.Cut(rest, "```")
	dir := t.TempDir()
	db := newDB(t)
	ran := filepath.Join(dir, "ran")
	// The agent's real work, stubbed: count the runs.
	prelude := "run_maintenance() { echo run >> '" + ran + "'; }\n"
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(strings.Replace(script, "#!/bin/sh\n", "#!/bin/sh\n"+prelude, 1)), 0o700)
	if !strings.Contains(script, "tollgate guard") {
		t.Fatalf("unexpected script:\n%s", script)
	}
	r := run(t, db, "", "epoch", "activate", "--json", "--operator", "root")
	want(t, r, 0)
	epoch := r.json(t)["epoch"].(string)
	agent := func() (int, string) {
		cmd := exec.Command("sh", filepath.Join(dir, "agent.sh"))
		cmd.Env = append(os.Environ(), "TOLLGATE_DB="+db, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	if code, out := agent(); code != 0 || !strings.Contains(out, "pending approval") {
		t.Fatalf("first run: %d %s", code, out)
	}
	key := "hsr1:" + epoch + ":maintenance-" + time.Now().Format("2006-01-02")
	want(t, run(t, db, "", "approve", key, "--operator", "alice"), 0)
	if code, out := agent(); code != 0 {
		t.Fatalf("approved run: %d %s", code, out)
	}
	if code, out := agent(); code != 1 || !strings.Contains(out, "settled") {
		t.Fatalf("third run must not act: %d %s", code, out)
	}
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "run") != 1 {
		t.Fatalf("maintenance ran %d times", strings.Count(string(b), "run"))
	}
	r = run(t, db, "", "status", key, "--json")
	if m := r.json(t); m["state"] != "succeeded" {
		t.Fatalf("state after the agent: %v", m["state"])
	}
}
