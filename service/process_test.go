package service_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/service"
)

var bin string

// TestMain builds the tollgate binary once: the process tests run it as
// the server and as the agents, as a deployment does.
func TestMain(m *testing.M) {
	// The server and the agents are built with a temporary folder's shared
	// witness and anchor, and the run fails if it touched the host's.
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		ledger.SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
		hostPlaces = p
	}, func() int {
		dir, err := os.MkdirTemp("", "tollgate-service")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		os.Chmod(dir, 0o755) // another user runs it in TestSocketAnotherUser
		bin = filepath.Join(dir, "tollgate")
		cmd := exec.Command("go", "build", "-ldflags", hostPlaces.LDFlags(), "-o", bin, "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
			return 1
		}
		return pgtest.Main(m)
	}))
}

// hostPlaces are this run's stand-ins for the host's shared witness and
// anchor.
var hostPlaces hostguard.Places

func testEnv(home string, extra ...string) []string {
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TOLLGATE_") && !strings.HasPrefix(e, "XDG_") && !strings.HasPrefix(e, "SSH_AUTH_SOCK=") {
			env = append(env, e)
		}
	}
	return append(append(env, "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data")), extra...)
}

// server is a `tollgate serve` process.
type server struct {
	cmd    *exec.Cmd
	addrs  []string // what it said it listens on
	stderr *bytes.Buffer
	mu     *sync.Mutex
	done   chan error
}

// startServer runs `tollgate --db db serve args...` and waits until it
// listens.
func startServer(t *testing.T, db, home string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--db", db, "serve"}, args...)...)
	cmd.Env = testEnv(home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	pr, pw, _ := os.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &server{cmd: cmd, stderr: new(bytes.Buffer), mu: new(sync.Mutex), done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			if a, ok := strings.CutPrefix(line, "tollgate serve: listening on "); ok {
				s.addrs = append(s.addrs, strings.TrimSuffix(a, " (TLS)"))
			}
			s.mu.Unlock()
			if strings.HasPrefix(line, "tollgate serve: listening on ") {
				if n++; n == countListen(args) {
					close(ready)
				}
			}
		}
	}()
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	select {
	case <-ready:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("serve exited: %v\n%s", err, s.log())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not listen\n%s", s.log())
	}
	return s
}

func countListen(args []string) int {
	n := 0
	for _, a := range args {
		if a == "--listen" {
			n++
		}
	}
	return n
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return m
}

// agent runs one tollgate command as an agent does, with env added.
func agent(t *testing.T, home string, env []string, cred *syscall.Credential, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = testEnv(home, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	cmd.Dir = home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// seedPolicy sets refund auto and email approval on the ledger at db.
func seedPolicy(t *testing.T, db string) {
	t.Helper()
	s, err := ledger.Open(context.Background(), db, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []approvals.Rule{{Pattern: "refund", Mode: approvals.Auto}, {Pattern: "email", Mode: approvals.Approval, TTL: time.Hour}} {
		if _, err := s.SetPolicy(context.Background(), r, "root"); err != nil {
			t.Fatal(err)
		}
	}
}

func me(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// agentsRace runs n agent processes, each guarding every key in turn
// through the URL, and returns each key's permits and every answer's
// exit code.
func agentsRace(t *testing.T, home string, env []string, n int, keys []string) (map[string][]string, map[int]int) {
	t.Helper()
	var mu sync.Mutex
	permits := map[string][]string{}
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range keys {
				key := keys[(i+j)%len(keys)]
				r := agent(t, home, env, nil, "guard", key, "--kind", "refund", "--target", "acct-"+key, "--body", "10 EUR", "--json")
				mu.Lock()
				codes[r.code]++
				if r.code == 0 {
					permits[key] = append(permits[key], r.json(t)["permit_id"].(string))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return permits, codes
}

// TestServeSocket: a server and several agent processes over the Unix
// socket; one permit per key; report, status and epoch show answer as
// they do on the ledger; the agent's name is its login user's.
func TestServeSocket(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	if os.Getenv("TOLLGATE_TEST_BACKEND") == "postgres" {
		db = pgtest.DB(t)
	}
	seedPolicy(t, db)
	sock := filepath.Join(home, "tollgate.sock")
	startServer(t, db, home, "--listen", "unix:"+sock, "--socket-user", me(t))
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket %v mode %v, want 0660", err, fi.Mode())
	}
	url := []string{"TOLLGATE_URL=unix://" + sock}
	// Given a URL the client never opens a ledger, not even to create it.
	untouched := filepath.Join(home, "nowhere", "ledger.db")
	if r := agent(t, home, append(url, "TOLLGATE_DB="+untouched), nil, "epoch", "show", "--json"); r.code != 0 {
		t.Fatalf("epoch show: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Dir(untouched)); !os.IsNotExist(err) {
		t.Fatalf("a client given a URL made a ledger's folder: %v", err)
	}

	keys := []string{"refund:a", "refund:b", "refund:c", "refund:d"}
	permits, codes := agentsRace(t, home, url, 4, keys)
	for _, k := range keys {
		if len(permits[k]) != 1 {
			t.Fatalf("%s: permits %v (exit codes %v)", k, permits[k], codes)
		}
	}
	if codes[0]+codes[75] != 16 {
		t.Fatalf("exit codes %v", codes)
	}

	// Report, then the answers of every agent command through the
	// service, compared with the same commands on the ledger itself.
	r := agent(t, home, url, nil, "report", "refund:a", "--permit", permits["refund:a"][0], "--outcome", "succeeded", "--ref", "pay-1", "--json")
	if r.code != 0 || r.json(t)["state"] != "succeeded" {
		t.Fatalf("report: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// Both sides below are retries of a pending request.
	agent(t, home, url, nil, "guard", "email:e1", "--kind", "email", "--target", "a@example.com", "--body", "hi")
	for _, c := range [][]string{
		{"status", "refund:a", "--json"},
		{"guard", "refund:a", "--kind", "refund", "--target", "acct-refund:a", "--body", "10 EUR", "--json"},
		{"guard", "refund:a", "--kind", "refund", "--target", "acct-refund:a", "--body", "99 EUR", "--json"},
		{"report", "refund:a", "--permit", permits["refund:a"][0], "--outcome", "failed", "--json"},
		{"status", "refund:none", "--json"},
		{"guard", "email:e1", "--kind", "email", "--target", "a@example.com", "--body", "hi", "--json"},
		{"epoch", "show", "--json"},
		{"guard", "Bad Key", "--kind", "refund", "--target", "t", "--body", "b", "--json"},
	} {
		remote := agent(t, home, url, nil, c...)
		local := agent(t, home, []string{"TOLLGATE_DB=" + db}, nil, c...)
		if remote.code != local.code {
			t.Errorf("%v: exit %d through the service, %d on the ledger\n%s\n%s", c, remote.code, local.code, remote.stdout, local.stdout)
			continue
		}
		rm, lm := remote.json(t), local.json(t)
		delete(rm, "authority")
		delete(lm, "authority")
		for _, m := range []map[string]any{rm, lm} {
			delete(m, "conflict_id") // each conflict is logged with its own id
		}
		if fmt.Sprint(rm) != fmt.Sprint(lm) {
			t.Errorf("%v: through the service\n%v\non the ledger\n%v", c, rm, lm)
		}
	}
	// The agent's name is the socket peer's login user.
	if m := agent(t, home, []string{"TOLLGATE_DB=" + db}, nil, "status", "refund:b", "--json").json(t); m["agent"] != me(t) {
		t.Fatalf("recorded agent %v, want %s", m["agent"], me(t))
	}
	// --url and --db together are a usage error, not a guess.
	if r := agent(t, home, nil, nil, "status", "refund:a", "--url", "unix://"+sock, "--db", db, "--json"); r.code != 2 {
		t.Fatalf("--url with --db: exit %d %s", r.code, r.stdout)
	}
	// --db given on the command line wins over $TOLLGATE_URL.
	if r := agent(t, home, append(url, "TOLLGATE_URL=unix:///nonexistent.sock"), nil, "--db", db, "status", "refund:a", "--json"); r.code != 0 {
		t.Fatalf("--db over $TOLLGATE_URL: exit %d %s", r.code, r.stderr)
	}
	// Acting as another name is refused (77) and records nothing.
	r = agent(t, home, url, nil, "guard", "refund:x", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "someone-else", "--json")
	if r.code != 77 {
		t.Fatalf("impersonation: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := agent(t, home, []string{"TOLLGATE_DB=" + db}, nil, "status", "refund:x", "--json"); r.code != 7 {
		t.Fatalf("an impersonating call recorded its key: %d", r.code)
	}
}

// TestSocketAnotherUser: an agent that runs as another Unix user, who
// cannot open the ledger file, guards through the socket when its group
// is admitted, and is refused (77) when it is not: the file-level attacks
// are out of its reach.
func TestSocketAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run an agent as another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	g, err := user.LookupGroupId(nobody.Gid)
	if err != nil {
		t.Skip("nobody has no group")
	}
	var uid, gid uint32
	fmt.Sscan(nobody.Uid, &uid)
	fmt.Sscan(nobody.Gid, &gid)
	cred := &syscall.Credential{Uid: uid, Gid: gid}

	private := t.TempDir() // the ledger's folder, the service user's alone
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(private, "ledger.db")
	seedPolicy(t, db)
	shared, err := os.MkdirTemp("", "tollgate-sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o755)
	agentHome := filepath.Join(shared, "agent")
	os.Mkdir(agentHome, 0o755)
	os.Chown(agentHome, int(uid), int(gid))
	sock := filepath.Join(shared, "tollgate.sock")
	srv := startServer(t, db, private, "--listen", "unix:"+sock, "--socket-group", g.Name)

	guard := []string{"guard", "refund:other-user", "--kind", "refund", "--target", "t", "--body", "b", "--json"}
	// The ledger itself is out of its reach.
	if r := agent(t, agentHome, []string{"TOLLGATE_DB=" + db}, cred, guard...); r.code == 0 {
		t.Fatalf("the other user guarded on the ledger file directly: %s", r.stdout)
	}
	r := agent(t, agentHome, []string{"TOLLGATE_URL=unix://" + sock}, cred, guard...)
	if r.code != 0 {
		t.Fatalf("through the socket: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, srv.log())
	}
	if m := agent(t, private, []string{"TOLLGATE_DB=" + db}, nil, "status", "refund:other-user", "--json").json(t); m["agent"] != "nobody" {
		t.Fatalf("recorded under %v, want nobody", m["agent"])
	}
	// The service's own user (root here) is not admitted by the group.
	if r := agent(t, private, []string{"TOLLGATE_URL=unix://" + sock}, nil, guard...); r.code != 77 || !strings.Contains(r.stderr, "--socket-user") {
		t.Fatalf("the service's own user: exit %d %s", r.code, r.stderr)
	}

	// doctor, run by the operator about the agents' user, finds the
	// deployment as docs/service.md lays it out: the service answers,
	// the agent can connect, the ledger is the service user's alone.
	// The socket comes from --socket, or from TOLLGATE_URL.
	doctor := func(env []string, args ...string) map[string]string {
		r := agent(t, private, append(env, "TOLLGATE_DB="+db), nil, append([]string{"doctor", "--agent-user", "nobody", "--json"}, args...)...)
		got := map[string]string{}
		for _, x := range r.json(t)["findings"].([]any) {
			if f := x.(map[string]any); strings.HasPrefix(f["id"].(string), "service.") {
				got[f["id"].(string)] = f["severity"].(string)
			}
		}
		return got
	}
	allOK := map[string]string{"service.running": "ok", "service.socket": "ok", "service.ledger-owner": "ok", "service.ledger-folder": "ok"}
	if got := doctor(nil, "--socket", sock); !maps.Equal(got, allOK) {
		t.Fatalf("doctor --socket on the recommended deployment: %v", got)
	}
	if got := doctor([]string{"TOLLGATE_URL=unix://" + sock}); !maps.Equal(got, allOK) {
		t.Fatalf("doctor with TOLLGATE_URL: %v", got)
	}
	// Killed, the server leaves its socket behind, and doctor says the
	// service is not running.
	srv.cmd.Process.Signal(syscall.SIGKILL)
	<-srv.done
	srv.done <- nil // for the cleanup
	if got := doctor(nil, "--socket", sock); got["service.running"] != "fail" {
		t.Fatalf("doctor with the server killed: %v", got)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tollgate test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// TestTCPWithTokens: agent processes over HTTPS with bearer tokens to a
// server on TLS (service.Listen, with the test's token store): one
// permit per key, the token's name recorded, impersonation, a missing
// and a revoked token refused.
func TestTCPWithTokens(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	seedPolicy(t, db)
	s, err := ledger.Open(context.Background(), db, ledger.Options{GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	certFile, keyFile := selfSigned(t, home)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := service.Listen("127.0.0.1:0", service.SocketPolicy{}, &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	creds := newTokens()
	srv := service.NewServer(service.Config{Ledger: s, Credentials: creds, Authority: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, 5*time.Second, ln) }()
	t.Cleanup(func() { cancel(); <-served })

	url := "https://" + ln.Addr().String()
	env := []string{"TOLLGATE_URL=" + url, "TOLLGATE_TOKEN=tok-bot1", "SSL_CERT_FILE=" + certFile}
	keys := []string{"refund:t1", "refund:t2", "refund:t3"}
	permits, codes := agentsRace(t, home, env, 3, keys)
	for _, k := range keys {
		if len(permits[k]) != 1 {
			t.Fatalf("%s: permits %v (codes %v)", k, permits[k], codes)
		}
		if d, _ := s.Status(context.Background(), k); d.Agent != "bot-1" {
			t.Fatalf("%s recorded under %q", k, d.Agent)
		}
	}
	guard := []string{"guard", "refund:t9", "--kind", "refund", "--target", "t", "--body", "b", "--json"}
	// --token-file works as the variable does.
	tf := filepath.Join(home, "token")
	os.WriteFile(tf, []byte("tok-bot2\n"), 0o600)
	if r := agent(t, home, []string{env[0], env[2]}, nil, append(guard, "--token-file", tf)...); r.code != 0 {
		t.Fatalf("--token-file: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"no token", []string{env[0], env[2]}, guard, 77},
		{"unknown token", []string{env[0], "TOLLGATE_TOKEN=nope", env[2]}, guard, 77},
		{"another agent's name", env, append(guard[:len(guard):len(guard)], "--agent", "bot-2"), 77},
		{"another agent's key", env, []string{"status", "refund:t9", "--json"}, 77},
		{"untrusted certificate", env[:2], guard, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := agent(t, home, c.env, nil, append(c.args, "--retry-for", "0s")...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			if m := r.json(t); m["exit_code"] != float64(c.code) {
				t.Fatalf("answer %v", m)
			}
		})
	}
	creds.revoke("tok-bot1")
	if r := agent(t, home, env, nil, "status", "refund:t1", "--json"); r.code != 77 || !strings.Contains(r.stderr, "revoked") {
		t.Fatalf("revoked token: %d %s", r.code, r.stderr)
	}
}
