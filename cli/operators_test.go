package cli_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/tollgate-dev/tollgate/cli"
)

func jsonOf(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("not one JSON object: %q (%v)", r.stdout, err)
	}
	return m
}

// TestOperatorKeysFromTheShell walks an operator's setup in three commands
// and the agent's attempts from its own shell: a spoofed name, its own
// key, no key.
func TestOperatorKeysFromTheShell(t *testing.T) {
	db := newDB(t)
	init1 := run(t, db, "", "operator", "init", "--json")
	want(t, init1, cli.ExitOK)
	m := jsonOf(t, init1)
	pub, keyFile := m["public_key"].(string), m["key_file"].(string)
	if m["created"] != true || !strings.HasPrefix(pub, "ssh-ed25519 ") {
		t.Fatalf("operator init: %v", m)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	again := jsonOf(t, run(t, db, "", "operator", "init", "--json"))
	if again["created"] != false || again["public_key"] != pub {
		t.Fatalf("a second init replaced the key: %v", again)
	}
	want(t, run(t, db, "", guardArgs("k:ops")...), cli.ExitRetry)
	if r := run(t, db, "", "operators", "list"); !strings.Contains(r.stdout, "decisions unsigned") {
		t.Fatalf("operators list on an unsigned ledger: %q", r.stdout)
	}
	want(t, run(t, db, "", "operators", "add", "alice", pub), cli.ExitOK)

	// The agent, from its own shell.
	agentKey := filepath.Join(t.TempDir(), "agent_ed25519")
	want(t, run(t, db, "", "operator", "init", "--key", agentKey), cli.ExitOK)
	for name, args := range map[string][]string{
		"spoofed name, agent's key": {"approve", "k:ops", "--operator", "alice", "--key", agentKey},
		"agent's own key":           {"approve", "k:ops", "--key", agentKey},
	} {
		r := run(t, db, "", append(args, "--json")...)
		want(t, r, cli.ExitNotPermitted)
		if !strings.Contains(r.stdout, "not permitted") {
			t.Fatalf("%s: %q", name, r.stdout)
		}
	}
	noKey := runEnv(t, db, "", []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "approve", "k:ops", "--operator", "alice")
	want(t, noKey, cli.ExitNotPermitted)
	if !strings.Contains(noKey.stderr, "operator key is needed") {
		t.Fatalf("no key: %q", noKey.stderr)
	}
	want(t, run(t, db, "", "approve", "k:ops", "--operator", "bob"), cli.ExitNotPermitted)
	want(t, run(t, db, "", guardArgs("k:ops")...), cli.ExitRetry)

	// The operator, with the key operator init made.
	r := run(t, db, "", "approve", "k:ops", "--reason", "checked")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "signed by alice (SHA256:") {
		t.Fatalf("approve: %q", r.stdout)
	}
	if r := run(t, db, "", "status", "k:ops"); !strings.Contains(r.stdout, "approved by alice at") || !strings.Contains(r.stdout, "signed by alice (SHA256:") {
		t.Fatalf("status shows no proof: %q", r.stdout)
	}
	want(t, run(t, db, "", guardArgs("k:ops")...), cli.ExitOK)
	if r := run(t, db, "", "export"); !strings.Contains(r.stdout, `"proof":{"status":"signed","operator":"alice"`) {
		t.Fatalf("export shows no proof: %q", r.stdout)
	}

	// Later changes are signed by a registered operator: the agent cannot
	// add itself, alice can add bob, and the last operator stays.
	agentPub := jsonOf(t, run(t, db, "", "operator", "init", "--key", agentKey, "--json"))["public_key"].(string)
	want(t, run(t, db, "", "operators", "add", "mallory", agentPub, "--key", agentKey), cli.ExitNotPermitted)
	want(t, run(t, db, "", "operators", "add", "bob", agentPub), cli.ExitOK)
	want(t, run(t, db, "", "operators", "remove", "bob"), cli.ExitOK)
	want(t, run(t, db, "", "operators", "remove", "alice"), cli.ExitInvalid)
	if r := run(t, db, "", "verify"); r.code != cli.ExitOK {
		t.Fatalf("verify: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestQuorumFromTheShell: two approvers, the same operator twice refused,
// the status line counting.
func TestQuorumFromTheShell(t *testing.T) {
	db := newDB(t)
	keys := map[string]string{}
	for _, n := range []string{"alice", "bob"} {
		keys[n] = filepath.Join(t.TempDir(), n)
		pub := jsonOf(t, run(t, db, "", "operator", "init", "--key", keys[n], "--json"))["public_key"].(string)
		want(t, run(t, db, "", "operators", "add", n, pub, "--key", keys["alice"]), cli.ExitOK)
	}
	want(t, run(t, db, "", "policy", "set", "system.*", "--mode", "approval", "--approvers", "2", "--key", keys["alice"]), cli.ExitOK)
	want(t, run(t, db, "", guardArgs("k:q")...), cli.ExitRetry)
	r := run(t, db, "", "approve", "k:q", "--key", keys["alice"])
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "1 of 2 approvals, still pending") {
		t.Fatalf("first approval: %q", r.stdout)
	}
	want(t, run(t, db, "", "approve", "k:q", "--key", keys["alice"]), cli.ExitConflict)
	want(t, run(t, db, "", guardArgs("k:q")...), cli.ExitRetry)
	want(t, run(t, db, "", "approve", "k:q", "--key", keys["bob"]), cli.ExitOK)
	if r := run(t, db, "", "status", "k:q"); !strings.Contains(r.stdout, "2 of 2 approvals") {
		t.Fatalf("status: %q", r.stdout)
	}
	want(t, run(t, db, "", guardArgs("k:q")...), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "x", "--mode", "approval", "--approvers", "10", "--key", keys["alice"]), cli.ExitInvalid)
}

// TestBadOperatorInput: each malformed key, key file or operators file is
// a clear error naming the rule, and nothing is stored.
func TestBadOperatorInput(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "migrate"), cli.ExitOK)
	pub := jsonOf(t, run(t, db, "", "operator", "init", "--json"))["public_key"].(string)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPub, _ := ssh.NewPublicKey(&rsaKey.PublicKey)
	rsaLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(rsaPub)))
	for _, tc := range []struct{ name, line, rule string }{
		{"rsa", rsaLine, "operator keys are Ed25519"},
		{"truncated", pub[:40], "not an OpenSSH public key line"},
		{"two lines", pub + "\n" + pub, "one line"},
		{"garbage", "hello", "not an OpenSSH public key line"},
	} {
		r := run(t, db, "", "operators", "add", "alice", tc.line)
		want(t, r, cli.ExitInvalid)
		if !strings.Contains(r.stderr, tc.rule) {
			t.Fatalf("%s: %q does not name %q", tc.name, r.stderr, tc.rule)
		}
	}
	if r := run(t, db, "", "operators", "list", "--json"); !strings.Contains(r.stdout, `"signed":false`) {
		t.Fatalf("a refused registration stored something: %q", r.stdout)
	}

	want(t, run(t, db, "", "operators", "add", "alice", pub), cli.ExitOK)
	want(t, run(t, db, "", guardArgs("k:bad")...), cli.ExitRetry)
	// A private key others can read is refused, as ssh refuses it.
	loose := filepath.Join(t.TempDir(), "loose")
	want(t, run(t, db, "", "operator", "init", "--key", loose), cli.ExitOK)
	os.Chmod(loose, 0o644)
	r := run(t, db, "", "approve", "k:bad", "--key", loose)
	want(t, r, cli.ExitInvalid)
	if !strings.Contains(r.stderr, "permissions 0644") || !strings.Contains(r.stderr, "too open") {
		t.Fatalf("0644 key: %q", r.stderr)
	}
	// An operators file that does not parse stops every writer, guard
	// included, naming the file's line.
	for name, body := range map[string]string{
		"truncated": "alice " + pub[:30] + "\n",
		"foreign":   "alice " + rsaLine + "\n",
		"empty":     "# nobody\n",
	} {
		file := filepath.Join(t.TempDir(), "operators")
		os.WriteFile(file, []byte(body), 0o644)
		r := runEnv(t, db, "", []string{"TOLLGATE_OPERATORS_FILE=" + file}, guardArgs("k:bad")...)
		want(t, r, cli.ExitInvalid)
		if !strings.Contains(r.stdout, "operators file") {
			t.Fatalf("%s operators file: %q", name, r.stdout)
		}
	}
	if r := run(t, db, "", "status", "k:bad", "--json"); !strings.Contains(r.stdout, `"votes":[]`) || !strings.Contains(r.stdout, `"state":"pending"`) {
		t.Fatalf("refusals stored something: %q", r.stdout)
	}
}

// TestAgentKeySigns: a key held by ssh-agent signs without any key file,
// and a passphrase-protected file whose key the agent holds is never
// decrypted (no terminal here to ask on: asking would fail the command).
func TestAgentKeySigns(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "tg-agent") // unix socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go agent.ServeAgent(keyring, c)
		}
	}()
	pub, _ := ssh.NewPublicKey(priv.Public())
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))

	db := newDB(t)
	env := []string{"SSH_AUTH_SOCK=" + sock, "XDG_CONFIG_HOME=" + t.TempDir()}
	want(t, run(t, db, "", "operators", "add", "alice", line), cli.ExitOK)
	want(t, run(t, db, "", guardArgs("k:agent")...), cli.ExitRetry)
	r := runEnv(t, db, "", env, "approve", "k:agent")
	want(t, r, cli.ExitOK)
	if !strings.Contains(r.stdout, "signed by alice (SHA256:") {
		t.Fatalf("agent approve: %q", r.stdout)
	}

	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	protected := filepath.Join(t.TempDir(), "protected")
	os.WriteFile(protected, pem.EncodeToMemory(block), 0o600)
	want(t, run(t, db, "", append(guardArgs("k:agent2"), "--lease", "1m")...), cli.ExitRetry)
	r = runEnv(t, db, "", env, "reject", "k:agent2", "--reason", "no", "--key", protected)
	want(t, r, cli.ExitOK)
	// Without the agent the same file needs its passphrase, and there is
	// no terminal to ask on: refused, naming the way out.
	want(t, run(t, db, "", guardArgs("k:agent3")...), cli.ExitRetry)
	r = runEnv(t, db, "", []string{"SSH_AUTH_SOCK="}, "approve", "k:agent3", "--key", protected)
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "ssh-agent") {
		t.Fatalf("protected key without agent or terminal: %d %q", r.code, r.stderr)
	}
}

// TestConsoleLeavesPassphraseToConsole: `console --key FILE` with a
// passphrase-protected registered key starts (no terminal is asked, and
// this test has none) and hands the key to the console locked, for its
// own prompt; a protected key that is not registered is not asked for.
func TestConsoleLeavesPassphraseToConsole(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	protected := filepath.Join(t.TempDir(), "protected")
	if err := os.WriteFile(protected, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	db := newDB(t)
	want(t, run(t, db, "", guardArgs("k:c")...), cli.ExitRetry)
	var got *cli.ConsoleOptions
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv:  func(string) string { return "" },
		Console: func(_ context.Context, o cli.ConsoleOptions) error { got = &o; return nil }}
	console := []string{"--db", db, "console", "--key", protected}
	if code := cli.Main(context.Background(), console, env); code != 0 || got == nil || len(got.Locked) != 0 {
		t.Fatalf("unsigned ledger: exit %d, locked %v", code, got)
	}
	want(t, run(t, db, "", "operators", "add", "alice", strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))), cli.ExitOK)
	got = nil
	if code := cli.Main(context.Background(), console, env); code != 0 || got == nil || len(got.Locked) != 1 || got.Locked[0].Path != protected || !got.Locked[0].Locked() {
		t.Fatalf("signed ledger: exit %d, options %+v", code, got)
	}
	// The console's calls are bounded as a command's are.
	got = nil
	bounded := []string{"--db", db, "console", "--retry-for", "5s", "--attempt-timeout", "2s"}
	if code := cli.Main(context.Background(), bounded, env); code != 0 || got == nil || got.Ledger.RetryFor != 5*time.Second || got.Ledger.AttemptTimeout != 2*time.Second {
		t.Fatalf("console --retry-for 5s --attempt-timeout 2s: exit %d, options %+v", code, got)
	}
}
