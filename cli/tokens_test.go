package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestAgentsTokenFromTheShell: an operator makes a token and sees its
// secret once (text and --json), lists tokens without any secret, revokes
// one by id; bad input is refused by rule (3, or 2 for usage) with
// nothing stored; on a signed ledger a process with no operator key is
// refused (77) and the key's holder signs. agents allow works on SQLite
// for the service's principals.
func TestAgentsTokenFromTheShell(t *testing.T) {
	db := newDB(t)
	r := run(t, db, "", "agents", "token", "create", "ci-runner", "--operator", "root", "--json")
	want(t, r, cli.ExitOK)
	m := r.json(t)
	secret, _ := m["secret"].(string)
	tok, _ := m["token"].(map[string]any)
	id, _ := tok["id"].(string)
	if !strings.HasPrefix(secret, "tg1_"+id+"_") || tok["name"] != "ci-runner" || tok["scope"] != "agent" || tok["created_by"] != "root" {
		t.Fatalf("create --json: %s", r.stdout)
	}
	txt := run(t, db, "", "agents", "token", "create", "night-shift", "--scope", "operator", "--operator", "root")
	want(t, txt, cli.ExitOK)
	if !strings.Contains(txt.stdout, "tg1_") || !strings.Contains(txt.stdout, "shown once") {
		t.Fatalf("create's text: %s", txt.stdout)
	}
	other := txt.stdout[strings.Index(txt.stdout, "tg1_"):]
	other = other[:strings.IndexByte(other, '\n')]
	for _, bad := range []struct {
		args []string
		code int
	}{
		{[]string{"agents", "token"}, cli.ExitUsage},
		{[]string{"agents", "token", "mint", "x"}, cli.ExitUsage},
		{[]string{"agents", "token", "create"}, cli.ExitUsage},
		{[]string{"agents", "token", "create", "x", "--scope", "root", "--operator", "root"}, cli.ExitInvalid},
		{[]string{"agents", "token", "list", "--scope", "operator"}, cli.ExitUsage},
		{[]string{"agents", "token", "revoke", "not-an-id", "--operator", "root"}, cli.ExitInvalid},
		{[]string{"agents", "token", "revoke", "0123456789abcdef", "--operator", "root"}, cli.ExitInvalid},
	} {
		if got := run(t, db, "", bad.args...); got.code != bad.code {
			t.Errorf("%v: exit %d, want %d: %s", bad.args, got.code, bad.code, got.stderr)
		}
	}
	list := run(t, db, "", "agents", "token", "list", "--json")
	want(t, list, cli.ExitOK)
	plain := run(t, db, "", "agents", "token", "list")
	export := run(t, db, "", "export")
	for i, out := range []string{list.stdout, plain.stdout, export.stdout} {
		if i < 2 && !strings.Contains(out, id) {
			t.Fatalf("the token's id is missing: %s", out)
		}
		for _, s := range []string{secret, other} {
			if strings.Contains(out, s) || strings.Contains(out, s[len(s)-43:]) {
				t.Fatalf("a secret in list or export output: %s", out)
			}
		}
	}
	want(t, run(t, db, "", "agents", "token", "revoke", id, "--operator", "root"), cli.ExitOK)
	if l := run(t, db, "", "agents", "token", "list"); !strings.Contains(l.stdout, "revoked") {
		t.Errorf("list after revoke: %s", l.stdout)
	}
	if a := run(t, db, "", "agents", "allow", "ci-runner", "deploy-bot", "--operator", "root", "--service", "--json"); a.code != cli.ExitOK || a.json(t)["allowed"] != true {
		t.Errorf("agents allow --service: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	if l := run(t, db, "", "agents", "list", "--service"); !strings.Contains(l.stdout, "deploy-bot") {
		t.Errorf("agents list --service: %s", l.stdout)
	}
	want(t, run(t, db, "", "verify"), cli.ExitOK)
}

// TestAgentsTokenOnSignedLedger: once an operator is registered, token
// and name changes need a registered key: without one they are refused
// (77) with nothing stored; with the key they are signed. On SQLite
// agents allow and list speak of the service's principals.
func TestAgentsTokenOnSignedLedger(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	pub := run(t, db, "", "operator", "init", "--json").json(t)["public_key"].(string)
	want(t, run(t, db, "", "operators", "add", "alice", pub), cli.ExitOK)
	nokey := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	for _, args := range [][]string{
		{"agents", "token", "create", "ci-runner"},
		{"agents", "token", "create", "ci-runner", "--operator", "alice"},
		{"agents", "allow", "ci-runner", "deploy-bot"},
	} {
		if r := runEnv(t, db, "", nokey, args...); r.code != cli.ExitNotPermitted {
			t.Errorf("%v without a key: exit %d, want %d: %s", args, r.code, cli.ExitNotPermitted, r.stderr)
		}
	}
	if r := run(t, db, "", "agents", "token", "create", "ci-runner", "--operator", "bob"); r.code != cli.ExitNotPermitted {
		t.Errorf("create as bob with alice's key: exit %d: %s", r.code, r.stderr)
	}
	if l := run(t, db, "", "agents", "token", "list", "--json"); strings.TrimSpace(l.stdout) != "[]" {
		t.Fatalf("refused acts stored tokens: %s", l.stdout)
	}
	r := run(t, db, "", "agents", "token", "create", "ci-runner", "--json")
	want(t, r, cli.ExitOK)
	if p := r.json(t)["token"].(map[string]any)["proof"].(map[string]any); p["status"] != "signed" || p["operator"] != "alice" {
		t.Fatalf("proof: %v", p)
	}
	want(t, run(t, db, "", "agents", "allow", "ci-runner", "deploy-bot"), cli.ExitOK)
	if l := run(t, db, "", "agents", "list"); !strings.Contains(l.stdout, "deploy-bot") || !strings.Contains(l.stdout, "signed by alice") {
		t.Errorf("agents list on SQLite: %s", l.stdout)
	}
	want(t, run(t, db, "", "verify"), cli.ExitOK)
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "ledger.db")); err != nil {
		t.Fatal(err)
	}
}
