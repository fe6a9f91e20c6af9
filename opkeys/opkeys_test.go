package opkeys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestInitKeepsAnExistingKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "tollgate", "operator_ed25519")
	pub, created, err := Init(path, "alice@host")
	if err != nil || !created {
		t.Fatalf("init: %v %v", created, err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes: key %v, folder %v", fi.Mode(), di.Mode())
	}
	again, created, err := Init(path, "other")
	if err != nil || created || Fingerprint(again) != Fingerprint(pub) {
		t.Fatalf("second init replaced or failed: %v %v", created, err)
	}
	k, err := Load(path)
	if err != nil || k.Locked() || Fingerprint(k.Public) != Fingerprint(pub) {
		t.Fatalf("load: %v", err)
	}
}

func TestLoadRefusesWhatSshRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	if _, _, err := Init(path, ""); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "permissions 0644") {
		t.Fatalf("0644 key: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "junk"), []byte("not a key"), 0o600)
	if _, err := Load(filepath.Join(dir, "junk")); !errors.Is(err, ErrKey) {
		t.Fatalf("junk: %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder: %v", err)
	}
}

// TestPassphraseAskedOnFirstSignature: a protected key knows its public
// key without the passphrase, and asks only when it signs.
func TestPassphraseAskedOnFirstSignature(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "k")
	os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
	k, err := Load(path)
	if err != nil || !k.Locked() {
		t.Fatalf("load: locked=%v %v", k != nil && k.Locked(), err)
	}
	want, _ := ssh.NewPublicKey(priv.Public())
	if Fingerprint(k.Public) != Fingerprint(want) {
		t.Fatal("public key differs")
	}
	asked := 0
	wrong := k.Signer(func(string) ([]byte, error) { asked++; return []byte("nope"), nil })
	if _, err := wrong.Sign(rand.Reader, []byte("x")); !errors.Is(err, ErrKey) || asked != 1 {
		t.Fatalf("wrong passphrase: %v (asked %d)", err, asked)
	}
	if s := k.Signer(nil); s.(interface{ MayWait() bool }).MayWait() != true {
		t.Fatal("a locked key must say it may wait")
	}
	if _, err := k.Signer(nil).Sign(rand.Reader, []byte("x")); err == nil || !strings.Contains(err.Error(), "ssh-agent") {
		t.Fatalf("no way to ask: %v", err)
	}
	right := k.Signer(func(string) ([]byte, error) { asked++; return []byte("s3cret"), nil })
	sig, err := right.Sign(rand.Reader, []byte("x"))
	if err != nil || want.Verify([]byte("x"), sig) != nil {
		t.Fatalf("right passphrase: %v", err)
	}
	if _, err := right.Sign(rand.Reader, []byte("y")); err != nil || asked != 2 {
		t.Fatalf("asked again after unlocking: %d %v", asked, err)
	}
}

func TestParsePublicKey(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	pub, _ := ssh.NewPublicKey(priv.Public())
	line := Line(pub)
	if _, err := ParsePublicKey(line + " alice@laptop"); err != nil {
		t.Fatalf("a key with a comment: %v", err)
	}
	for name, bad := range map[string]string{
		"empty":      "",
		"truncated":  line[:len(line)-10],
		"options":    `command="sh" ` + line,
		"two lines":  line + "\n" + line,
		"not base64": "ssh-ed25519 !!!",
	} {
		if _, err := ParsePublicKey(bad); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAnchor(t *testing.T) {
	_, a, _ := ed25519.GenerateKey(rand.Reader)
	_, b, _ := ed25519.GenerateKey(rand.Reader)
	pa, _ := ssh.NewPublicKey(a.Public())
	pb, _ := ssh.NewPublicKey(b.Public())
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "operators")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	anc, err := ReadAnchor(write("# operators\nalice,Alice2 " + Line(pa) + " laptop\n\n\"bob\" namespaces=\"tollgate\" " + Line(pb) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := anc.Allows("ALICE", pa); err != nil {
		t.Fatalf("alice: %v", err)
	}
	if err := anc.Allows("bob", pa); err == nil {
		t.Fatal("alice's key allowed for bob")
	}
	if err := anc.Allows("bob", pb); err != nil {
		t.Fatalf("bob: %v", err)
	}
	_, c, _ := ed25519.GenerateKey(rand.Reader)
	pc, _ := ssh.NewPublicKey(c.Public())
	if err := anc.Allows("carol", pc); err == nil || !strings.Contains(err.Error(), "not listed") {
		t.Fatalf("unlisted key: %v", err)
	}
	for name, body := range map[string]string{
		"truncated":      "alice " + Line(pa)[:30] + "\n",
		"no key":         "alice\n",
		"cert authority": "alice cert-authority " + Line(pa) + "\n",
		"empty":          "# nobody\n",
	} {
		if _, err := ReadAnchor(write(body)); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "operators file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if a, err := FindAnchor(""); a != nil && !exists(SystemAnchorPath) || err != nil && !exists(SystemAnchorPath) {
		t.Fatalf("no anchor configured: %v %v", a, err)
	}
	if _, err := FindAnchor(filepath.Join(dir, "missing")); !errors.Is(err, ErrKey) {
		t.Fatalf("a named anchor that is missing: %v", err)
	}
}

// TestEnvironmentNarrowsTheSystemAnchor plays the agent that points
// TOLLGATE_OPERATORS_FILE at a file of its own: under a system anchor the
// variable can only take keys away, never add one; without a system
// anchor it applies but is no security boundary.
func TestEnvironmentNarrowsTheSystemAnchor(t *testing.T) {
	keys := make([]ssh.PublicKey, 3)
	for i := range keys {
		_, k, _ := ed25519.GenerateKey(rand.Reader)
		keys[i], _ = ssh.NewPublicKey(k.Public())
	}
	alice, bob, agent := keys[0], keys[1], keys[2]
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	defer func(old string) { SystemAnchorPath = old }(SystemAnchorPath)
	SystemAnchorPath = write("system", "alice "+Line(alice)+"\nbob "+Line(bob)+"\n")
	own := write("agent", "alice "+Line(alice)+"\nmallory "+Line(agent)+"\n* "+Line(agent)+"\n")

	a, err := FindAnchor(own)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Boundary() || !strings.Contains(a.Describe(), "narrowed by") {
		t.Fatalf("a narrowed system anchor: boundary %v, %q", a.Boundary(), a.Describe())
	}
	if err := a.Allows("mallory", agent); err == nil {
		t.Fatal("the agent's own file widened the system anchor")
	}
	if err := a.Allows("alice", alice); err != nil {
		t.Fatalf("a key both list: %v", err)
	}
	if err := a.Allows("bob", bob); err == nil {
		t.Fatal("the variable did not narrow: bob is not in the agent's file")
	}
	if a, err := FindAnchor(""); err != nil || !a.Boundary() || a.Allows("bob", bob) != nil {
		t.Fatalf("the system anchor alone: %v %v", a, err)
	}

	SystemAnchorPath = filepath.Join(dir, "absent")
	a, err = FindAnchor(own)
	if err != nil {
		t.Fatal(err)
	}
	if a.Boundary() || !strings.Contains(a.Describe(), "not a security boundary") || a.Allows("mallory", agent) != nil {
		t.Fatalf("the variable alone: boundary %v, %q", a.Boundary(), a.Describe())
	}
	if a, err := FindAnchor(""); a != nil || err != nil || !strings.Contains(a.Describe(), "only as safe as the ledger file's permissions") {
		t.Fatalf("no anchor: %v %v", a, err)
	}
}
