package cli_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// nobodyUID is the agents' user in the doctor's layouts.
const nobodyUID = 65534

// owners maps each entry under dir to its owner's uid.
func owners(t *testing.T, dir string) map[string]uint32 {
	t.Helper()
	out := map[string]uint32{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fi.Sys().(*syscall.Stat_t).Uid
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDoctorEnforcesOnlyOnAGoodLayout takes tollgate built with its
// system anchor and shared witness in a temporary folder (as an install
// fixes them, with -ldflags -X), lays out a deployment there and runs 'tollgate
// doctor --agent-user nobody' through the binary: exit 0 for the good
// layout, with every finding ok; exit 1, naming the finding, for each
// layout that lets the agent's user around approval. Doctor leaves the
// ledger's folder exactly as it found it.
func TestDoctorEnforcesOnlyOnAGoodLayout(t *testing.T) {
	sqliteOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("the layout gives files to another user (nobody): it needs root, as CI has")
	}
	bin, anchor, witness := anchoredBinary(t)
	t.Cleanup(func() { os.Remove(anchor); os.RemoveAll(filepath.Dir(witness)) })
	dir := t.TempDir()
	// The folders above the build's anchor and witness, and t.TempDir's,
	// are 0700: open them as system folders are, so that only modes and
	// owners set below decide what the agent's user reaches.
	for _, d := range []string{filepath.Dir(filepath.Dir(anchor)), filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "data", "ledger.db")
	config := filepath.Join(dir, "op", "config")
	op := []string{"XDG_CONFIG_HOME=" + config, "XDG_STATE_HOME=" + filepath.Join(dir, "op", "state")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The operator's key (root's, 0600), the anchor listing it (root's,
	// 0644), the ledger signed by it, the witness holding its head.
	run := func(env []string, args ...string) result { return runBin(t, bin, db, "", append(op, env...), args...) }
	r := run(nil, "operator", "init", "--json")
	want(t, r, cli.ExitOK)
	pub := r.json(t)["public_key"].(string)
	must(os.MkdirAll(filepath.Dir(anchor), 0o755))
	must(os.WriteFile(anchor, []byte("alice "+pub+"\n"), 0o644))
	want(t, run(nil, "operators", "add", "alice", pub), cli.ExitOK)
	// As the README installs it: 2775, group the operators' (root's
	// here, a group the agent's user is not in); verify feeds it.
	must(os.MkdirAll(filepath.Dir(witness), 0o755))
	must(os.Chmod(filepath.Dir(witness), os.ModeSetgid|0o775))
	want(t, run(nil, "verify"), cli.ExitOK)
	// The ledger is the agents', as SQLite needs.
	for p := range owners(t, filepath.Dir(db)) {
		must(os.Chown(p, nobodyUID, nobodyUID))
	}
	before := owners(t, filepath.Dir(db))

	doctor := func(args ...string) result { return run(nil, append([]string{"doctor"}, args...)...) }
	r = doctor("--agent-user", "nobody", "--json")
	want(t, r, cli.ExitOK)
	m := r.json(t)
	if m["exit_code"] != float64(0) || m["enforces"] != true {
		t.Fatalf("good layout: %s", r.stdout)
	}
	var ids []string
	for _, x := range m["findings"].([]any) {
		f := x.(map[string]any)
		for _, k := range []string{"id", "ok", "severity", "message", "fix"} {
			if _, ok := f[k]; !ok {
				t.Errorf("a finding without %q: %v", k, f)
			}
		}
		if f["ok"] != true {
			t.Errorf("good layout, finding not ok: %v", f)
		}
		ids = append(ids, f["id"].(string))
	}
	for _, id := range []string{"agent.user", "ledger.file", "ledger.signed", "anchor.system", "witness.system", "key.file"} {
		if !slices.Contains(ids, id) {
			t.Errorf("good layout: no %s finding in %v", id, ids)
		}
	}
	r = doctor("--agent-user", "nobody")
	want(t, r, cli.ExitOK)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2*len(ids)+1 ||
		!strings.HasPrefix(lines[len(lines)-1], "this deployment enforces approval against the agent's user nobody") {
		t.Fatalf("text: two lines a finding and the verdict, got:\n%s", r.stdout)
	}
	if after := owners(t, filepath.Dir(db)); !maps(before, after) {
		t.Fatalf("doctor changed the ledger's folder: %v, then %v", before, after)
	}

	key := filepath.Join(config, "tollgate", "operator_ed25519")
	for _, tc := range []struct {
		name        string
		args        []string
		env         []string
		breaks, fix func()
		id          string
	}{
		{name: "doctor judges its own user, root", id: "agent.user"},
		{name: "anchor writable by the agent", args: []string{"--agent-user", "nobody"}, id: "anchor.system",
			breaks: func() { must(os.Chmod(anchor, 0o666)) }, fix: func() { must(os.Chmod(anchor, 0o644)) }},
		{name: "anchor only in the environment", args: []string{"--agent-user", "nobody"}, env: []string{"TOLLGATE_OPERATORS_FILE=" + anchor + ".env"}, id: "anchor.system",
			breaks: func() { must(os.Rename(anchor, anchor+".env")) }, fix: func() { must(os.Rename(anchor+".env", anchor)) }},
		{name: "witness the agent's", args: []string{"--agent-user", "nobody"}, id: "witness.system",
			breaks: func() { must(os.Chown(witness, nobodyUID, 0)) }, fix: func() { must(os.Chown(witness, 0, 0)) }},
		{name: "operator key readable by the agent", args: []string{"--agent-user", "nobody"}, id: "key.file",
			breaks: func() {
				for _, p := range []string{filepath.Dir(config), config, filepath.Dir(key), key} {
					must(os.Chmod(p, 0o755))
				}
			},
			fix: func() { must(os.Chmod(key, 0o600)); must(os.Chmod(filepath.Dir(key), 0o700)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.breaks != nil {
				tc.breaks()
				defer tc.fix()
			}
			r := run(tc.env, append([]string{"doctor", "--json"}, tc.args...)...)
			want(t, r, cli.ExitError)
			found := false
			for _, x := range r.json(t)["findings"].([]any) {
				f := x.(map[string]any)
				found = found || (f["id"] == tc.id && f["severity"] == "fail")
			}
			if !found {
				t.Fatalf("no failing %s finding: %s", tc.id, r.stdout)
			}
		})
	}
	want(t, doctor("--agent-user", "no-such-user-here"), cli.ExitInvalid)
	want(t, doctor("--agent-user", "nobody"), cli.ExitOK) // every layout mended
}

// maps reports whether a and b hold the same entries.
func maps(a, b map[string]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestDoctorEscapesWhatItPrints: a ledger path carrying a terminal
// escape (retitling the window) and a bidi override is printed escaped in
// the text, and in JSON as \u escapes; doctor creates nothing there.
func TestDoctorEscapesWhatItPrints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "led\x1b]0;owned\x07ger\u202e.db")
	for _, args := range [][]string{{"--db", db, "doctor"}, {"--db", db, "doctor", "--json"}} {
		var out, errb bytes.Buffer
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := cli.Main(context.Background(), args, env); code != cli.ExitError {
			t.Fatalf("%v: exit %d, want %d (no ledger there)\n%s%s", args, code, cli.ExitError, out.String(), errb.String())
		}
		if strings.ContainsAny(out.String(), "\x1b\x07\u202e") || !strings.Contains(out.String(), "no ledger at") {
			t.Fatalf("%v printed a raw control or format character, or no finding:\n%q", args, out.String())
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("doctor created the ledger: %v", err)
	}
}
