package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Direct reports whether this run's tests connect straight to the
// server, not through a pooler (TOLLGATE_TEST_PG_ADMIN unset or the same
// as TOLLGATE_TEST_PG): a test on a cluster of its own runs in the direct
// run only, not again in the pooled one.
func Direct() bool {
	a := os.Getenv("TOLLGATE_TEST_PG_ADMIN")
	return a == "" || a == os.Getenv("TOLLGATE_TEST_PG")
}

// Cluster is a PostgreSQL cluster of one test's own, set up like the
// shared one (.ci/postgres: scram-sha-256 over TLS, verify-full), which
// the test may restart, crash, or fail over to a standby without
// disturbing the other tests that share TOLLGATE_TEST_PG.
type Cluster struct {
	// Dir is the folder .ci/postgres made: the CA (ca.crt), the server's
	// certificate and key, data/ (the primary's data) and the log.
	Dir string
	// Data is this server's data folder; Port its TCP port on 127.0.0.1.
	Data string
	Port int
	// Admin is the superuser's URL to this server.
	Admin string
	log   string
	// primary is the cluster this one is a standby of (nil for a primary).
	primary *Cluster
}

// NewCluster starts a cluster of the test's own with .ci/postgres and
// stops it (and every standby made from it) when the test ends. It
// skips where the PostgreSQL binaries are absent, unless
// TOLLGATE_REQUIRE_PG is set.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	for _, p := range []string{"initdb", "pg_ctl", "pg_basebackup"} {
		if _, err := bin(p); err != nil {
			if os.Getenv("TOLLGATE_REQUIRE_PG") == "" {
				t.Skipf("PostgreSQL tests skipped: %v", err)
			}
			t.Fatal(err)
		}
	}
	script, err := ciScript("postgres")
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := exec.Command(script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", script, err, stderr.String())
	}
	dir, u, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		t.Fatalf("%s printed %q, not a folder and a URL", script, out)
	}
	t.Cleanup(func() { exec.Command(script, "stop", dir).Run() })
	port, err := strconv.Atoi(readTrim(filepath.Join(dir, "port")))
	if err != nil {
		t.Fatalf("%s/port: %v", dir, err)
	}
	c := &Cluster{Dir: dir, Data: filepath.Join(dir, "data"), Port: port, Admin: u, log: filepath.Join(dir, "log")}
	if err := c.waitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// asPostgres runs a PostgreSQL program as the postgres user when the
// tests run as root (initdb, pg_ctl and the server refuse root).
func asPostgres(name string, args ...string) *exec.Cmd {
	p, err := bin(name)
	if err != nil {
		p = name
	}
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", p}, args...)...)
	}
	return exec.Command(p, args...)
}

func runPG(name string, args ...string) error {
	cmd := asPostgres(name, args...)
	// Not the test's pipes: a server pg_ctl starts would inherit and hold
	// them, and Output would wait for the server to exit.
	cmd.Stdout, cmd.Stderr = nil, nil
	f, err := os.CreateTemp("", "pgtest-"+name)
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(f.Name())
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, b)
	}
	return nil
}

// Restart restarts the server with pg_ctl restart -m MODE (immediate:
// every session is cut at once and the server recovers from its WAL on
// start, as after a crash) and waits until it accepts connections.
func (c *Cluster) Restart(mode string) error {
	if err := runPG("pg_ctl", "restart", "-D", c.Data, "-m", mode, "-w", "-t", "60", "-l", c.log); err != nil {
		return err
	}
	return c.waitReady(30 * time.Second)
}

// Kill stops the server at once (pg_ctl stop -m immediate), as a crash
// of its host would: nothing is flushed or handed over.
func (c *Cluster) Kill() error {
	return runPG("pg_ctl", "stop", "-D", c.Data, "-m", "immediate", "-w", "-t", "60")
}

// Terminate ends with pg_terminate_backend every client session whose
// pg_stat_activity row matches where (say, "usename LIKE 'x%'"), other
// than the caller's, and returns how many it ended.
func (c *Cluster) Terminate(ctx context.Context, where string) (int, error) {
	db, err := sql.Open("pgx", c.Admin)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND ("+where+")) t").Scan(&n)
	return n, err
}

// waitReady waits until the superuser can connect and query.
func (c *Cluster) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		db, err := sql.Open("pgx", c.Admin)
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster in %s did not come up: %v", c.Data, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Exec runs statements as the superuser.
func (c *Cluster) Exec(t testing.TB, qs ...string) {
	t.Helper()
	db, err := sql.Open("pgx", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

var clusterSeq atomic.Int64

// DB creates an empty database on this cluster owned by a fresh login
// role (not a superuser) and returns that role's URL.
func (c *Cluster) DB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("c%d_%d", os.Getpid(), clusterSeq.Add(1))
	c.Exec(t,
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' CREATEROLE", name+"_owner", Password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, name+"_owner"))
	return WithRole(c.Admin, name, name+"_owner")
}

// Role creates a login role in group (tollgate_agent or
// tollgate_operator) and returns dbURL's database as it. Its name is the
// database's, "_", name.
func (c *Cluster) Role(t testing.TB, dbURL, name, group string) string {
	t.Helper()
	u, _ := url.Parse(dbURL)
	database := strings.TrimPrefix(u.Path, "/")
	role := database + "_" + name
	c.Exec(t, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE %s", role, Password, group))
	allowShortName(t, dbURL, role, name)
	return WithRole(dbURL, database, role)
}

// freePort asks the kernel for a TCP port no one listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// SyncStandby makes a streaming standby of c with pg_basebackup, starts
// it, names it in c's synchronous_standby_names and sets c's
// synchronous_commit to level (on, remote_write, remote_apply), so that
// a commit is acknowledged only once the standby has it; it waits until
// the standby streams synchronously. The standby logs in for
// replication by scram-sha-256 over TLS, as any other client.
func (c *Cluster) SyncStandby(t testing.TB, level string) *Cluster {
	t.Helper()
	// Replication connections match no "all" line of pg_hba.conf.
	hba, err := os.OpenFile(filepath.Join(c.Data, "pg_hba.conf"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(hba.Name())
	hba.Truncate(0)
	hba.WriteAt(append([]byte("hostssl  replication  postgres  127.0.0.1/32  scram-sha-256\n"), old...), 0)
	hba.Close()
	c.Exec(t, "SELECT pg_reload_conf()")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Cluster{Dir: c.Dir, Data: filepath.Join(c.Dir, "standby"), Port: port, log: filepath.Join(c.Dir, "standby.log"), primary: c}
	u, _ := url.Parse(c.Admin)
	u.Host = fmt.Sprintf("127.0.0.1:%d", port)
	s.Admin = u.String()
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s sslmode=verify-full sslrootcert=%s application_name=standby1",
		c.Port, Password, filepath.Join(c.Dir, "ca.crt"))
	// -R writes primary_conninfo and standby.signal; -X stream copies the
	// WAL written during the copy.
	if err := runPG("pg_basebackup", "-d", conninfo, "-D", s.Data, "-R", "-X", "stream", "-c", "fast"); err != nil {
		t.Fatal(err)
	}
	// A server started from the copy without -l would hold this test's
	// pipes: its log goes to a file, and its socket folder and port are
	// its own (the copy's postgresql.conf names the primary's files).
	if err := runPG("pg_ctl", "start", "-D", s.Data, "-w", "-t", "60", "-l", s.log,
		"-o", fmt.Sprintf("-k %s -c listen_addresses=127.0.0.1 -p %d -c fsync=off -c max_connections=200", c.Dir, port)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Kill() })
	if err := s.waitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	c.Exec(t,
		"ALTER SYSTEM SET synchronous_standby_names = 'standby1'",
		"ALTER SYSTEM SET synchronous_commit = '"+level+"'",
		"SELECT pg_reload_conf()")
	db, err := sql.Open("pgx", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		db.QueryRow("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'").Scan(&state)
		if state == "sync" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby is not synchronous after 30 s (sync_state %q); its log:\n%s", state, readTrim(s.log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Promote makes a standby the primary (pg_ctl promote, which waits until
// it accepts writes).
func (c *Cluster) Promote() error {
	if c.primary == nil {
		return fmt.Errorf("%s is not a standby", c.Data)
	}
	return runPG("pg_ctl", "promote", "-D", c.Data, "-w", "-t", "60")
}

// MultiHost is u (a URL to one of the servers) with its host replaced by
// every server's address, and target_session_attrs=read-write: a client
// tries each in turn and keeps the one that accepts writes, as a client
// of a failed-over cluster would.
func MultiHost(u string, servers ...*Cluster) string {
	p, _ := url.Parse(u)
	var hosts []string
	for _, s := range servers {
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", s.Port))
	}
	p.Host = strings.Join(hosts, ",")
	q := p.Query()
	q.Set("target_session_attrs", "read-write")
	p.RawQuery = q.Encode()
	return p.String()
}

// Bouncer is a pgbouncer in transaction pooling mode in front of a
// cluster of the test's own, set up by .ci/pgbouncer as the README's
// "PostgreSQL in production" tells a site to; the test may kill and
// restart it.
type Bouncer struct {
	// Host is its address (127.0.0.1:port): a role's URL to the cluster
	// with this host goes through it.
	Host string
	dir  string
}

// Bouncer starts pgbouncer in front of c (stopped with c). It skips where
// pgbouncer is not installed, unless TOLLGATE_REQUIRE_PG is set.
func (c *Cluster) Bouncer(t testing.TB) *Bouncer {
	t.Helper()
	if _, err := pgbouncerBin(); err != nil {
		if os.Getenv("TOLLGATE_REQUIRE_PG") == "" {
			t.Skipf("pgbouncer tests skipped: %v", err)
		}
		t.Fatal(err)
	}
	script, err := ciScript("pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := exec.Command(script, c.Dir, c.Admin)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", script, err, stderr.String())
	}
	u, err := url.Parse(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
	b := &Bouncer{Host: u.Host, dir: filepath.Join(c.Dir, "pgbouncer")}
	t.Cleanup(func() { b.Kill() })
	return b
}

func pgbouncerBin() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", fmt.Errorf("pgbouncer is not installed (the Debian package pgbouncer)")
}

// URL is u (a role's URL to the cluster) through the pooler.
func (b *Bouncer) URL(u string) string {
	p, _ := url.Parse(u)
	p.Host = b.Host
	return p.String()
}

// Kill ends pgbouncer at once (SIGKILL), as a crash of the pooler's
// process or host would: every client connection through it is cut.
func (b *Bouncer) Kill() error {
	pid, err := strconv.Atoi(readTrim(filepath.Join(b.dir, "pid")))
	if err != nil {
		return fmt.Errorf("pgbouncer's pid file: %v", err)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	p.Kill()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if p.Signal(syscall.Signal(0)) != nil {
			os.Remove(filepath.Join(b.dir, "pid"))
			return nil
		}
	}
	return fmt.Errorf("pgbouncer %d did not exit", pid)
}

// Restart kills pgbouncer and starts it again on the same port with the
// same configuration, and waits until it accepts connections.
func (b *Bouncer) Restart() error {
	if err := b.Kill(); err != nil {
		return err
	}
	p, err := pgbouncerBin()
	if err != nil {
		return err
	}
	args := []string{"-d", "-q", filepath.Join(b.dir, "pgbouncer.ini")}
	cmd := exec.Command(p, args...)
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", p}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgbouncer %s: %v: %s", strings.Join(args, " "), err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", b.Host, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("pgbouncer did not listen on %s again", b.Host)
}
