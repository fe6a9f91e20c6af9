// Package pgtest gives tests a PostgreSQL database of their own on a
// throwaway cluster: the one CI started (TOLLGATE_TEST_PG, an admin URL)
// or, when that is unset, one this test process starts from the Debian
// binaries (initdb, pg_ctl) in a temporary folder and stops when its
// tests end. Tests that need PostgreSQL skip only where the binaries are
// absent, and say so; TOLLGATE_REQUIRE_PG turns that skip into a failure.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// Password is the test clusters' password for every role they create:
// password authentication over TCP, as agents on other hosts would use.
const Password = "tollgate-test"

var (
	once    sync.Once
	admin   string // superuser URL
	stop    func()
	failure error
	seq     atomic.Int64
)

// Main runs a package's tests and stops the cluster they started.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if stop != nil {
		stop()
	}
	return code
}

// Admin returns the superuser URL of the test cluster, starting it once.
func Admin(t testing.TB) string {
	t.Helper()
	once.Do(func() { admin, stop, failure = start() })
	if failure != nil {
		if errors.Is(failure, errNoBinaries) && os.Getenv("TOLLGATE_REQUIRE_PG") == "" {
			t.Skipf("PostgreSQL tests skipped: %v", failure)
		}
		t.Fatalf("PostgreSQL test cluster: %v", failure)
	}
	return admin
}

// DB creates an empty database owned by a fresh login role (the schema's
// owner, not a superuser) and returns that role's URL; the database is
// dropped when the test ends.
func DB(t testing.TB) string {
	t.Helper()
	a := Admin(t)
	n := seq.Add(1)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), n)
	db, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' CREATEROLE", name+"_owner", Password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, name+"_owner"),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", a)
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Exec("DROP ROLE IF EXISTS " + name + "_owner")
	})
	return WithRole(a, name, name+"_owner")
}

// Role creates a login role that is a member of group (tollgate_agent or
// tollgate_operator) and returns the URL of dbURL's database as it.
func Role(t testing.TB, dbURL, name, group string) string {
	t.Helper()
	db, err := sql.Open("pgx", Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, _ := url.Parse(dbURL)
	role := strings.TrimPrefix(u.Path, "/") + "_" + name
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE %s", role, Password, group),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", Admin(t))
		if err == nil {
			db.Exec("DROP OWNED BY " + role)
			db.Exec("DROP ROLE IF EXISTS " + role)
			db.Close()
		}
	})
	return WithRole(dbURL, strings.TrimPrefix(u.Path, "/"), role)
}

// WithRole is base with its database and user replaced.
func WithRole(base, database, role string) string {
	u, _ := url.Parse(base)
	u.Path = "/" + database
	u.User = url.UserPassword(role, Password)
	return u.String()
}

var errNoBinaries = errors.New("no initdb or pg_ctl on PATH or under /usr/lib/postgresql (install postgresql-15)")

// bin finds a PostgreSQL program on PATH or in Debian's folder.
func bin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(ms) == 0 {
		return "", errNoBinaries
	}
	return ms[len(ms)-1], nil
}

// start brings up a cluster: the one named by TOLLGATE_TEST_PG, or a new
// one in a temporary folder, run as the postgres user when this process
// is root (initdb refuses root).
func start() (string, func(), error) {
	if u := os.Getenv("TOLLGATE_TEST_PG"); u != "" {
		return u, nil, nil
	}
	initdb, err := bin("initdb")
	if err != nil {
		return "", nil, err
	}
	pgctl, err := bin("pg_ctl")
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "tollgate-pg-")
	if err != nil {
		return "", nil, err
	}
	run := func(args ...string) *exec.Cmd { return exec.Command(args[0], args[1:]...) }
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("running as root, and initdb refuses root: %w (create the postgres user)", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		run = func(args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		return "", nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := run(initdb, "-D", data, "-U", "postgres", "--pwfile", pw, "--auth-local", "trust", "--auth-host", "scram-sha-256", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses=127.0.0.1 -p %d -c fsync=off -c max_connections=200", dir, port)
	if out, err := run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("pg_ctl start: %v: %s %s", err, out, log)
	}
	stop := func() {
		run(pgctl, "-D", data, "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	}
	u := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", Password, port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", u)
	if err == nil {
		err = db.PingContext(ctx)
		db.Close()
	}
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("connect to the test cluster: %w", err)
	}
	return u, stop, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
