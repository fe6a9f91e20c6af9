// Package pgtest gives tests a PostgreSQL database of their own on a
// throwaway cluster: the one CI started (TOLLGATE_TEST_PG) or, when that
// is unset, one this test process starts with .ci/postgres and stops when
// its tests end. Either way the cluster is set up as the README tells a
// site to: scram-sha-256 passwords over TLS only, verified by name
// (sslmode=verify-full), so every test role logs in that way.
//
// TOLLGATE_TEST_PG is the URL clients connect through (the server, or a
// pooler such as pgbouncer in front of it); its user and database are
// replaced per test. TOLLGATE_TEST_PG_ADMIN, when set, is a superuser's
// URL straight to the server, for what a pooler does not pass on
// (CREATE DATABASE, CREATE ROLE, terminating sessions); it defaults to
// TOLLGATE_TEST_PG. Tests that need PostgreSQL skip only where the
// binaries are absent, and say so; TOLLGATE_REQUIRE_PG turns that skip
// into a failure.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// Password is the test clusters' password for every role they create:
// scram-sha-256 over TLS, as agents on other hosts would log in.
const Password = "tollgate-test"

var (
	once    sync.Once
	admin   string // superuser URL, straight to the server
	client  string // the URL tests' roles connect through
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

// Admin returns a superuser URL straight to the test cluster's server,
// starting the cluster once.
func Admin(t testing.TB) string {
	t.Helper()
	once.Do(func() { admin, client, stop, failure = start() })
	if failure != nil {
		if errors.Is(failure, errNoBinaries) && os.Getenv("TOLLGATE_REQUIRE_PG") == "" {
			t.Skipf("PostgreSQL tests skipped: %v", failure)
		}
		t.Fatalf("PostgreSQL test cluster: %v", failure)
	}
	return admin
}

// DB creates an empty database owned by a fresh login role (the schema's
// owner, not a superuser), with no bound on how far a fact's time may be
// from the database's clock, and returns that role's URL through
// TOLLGATE_TEST_PG (with its TLS settings); the database is dropped when
// the test ends.
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
		// Tests run the ledger on an injected clock, days from the
		// database's: the bound on a fact's time (schema 11) is lifted,
		// as only a database's owner may; a test of the bound sets it.
		fmt.Sprintf("ALTER DATABASE %s SET tollgate.clock_skew_ms = '-1'", name),
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
	return WithRole(client, name, name+"_owner")
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
	allowShortName(t, dbURL, role, name)
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

// allowShortName lets role act as agent name (schema 28 binds an agent's
// name to its login role): the tests' roles carry their database's name
// as a prefix, and the tests name their agents without it, as a site's
// operator would allow with `tollgate agents allow ROLE NAME`. It runs as
// dbURL's role, the schema's owner, and does nothing on a ledger older
// than schema 28 or not yet created.
func allowShortName(t testing.TB, dbURL, role, name string) {
	t.Helper()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := fmt.Sprintf(`DO $$ BEGIN IF to_regprocedure('tollgate_agent_allow(text, text)') IS NOT NULL THEN PERFORM tollgate_agent_allow('%s', '%s'); END IF; END $$`, role, name)
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("allowing %s the agent name %s: %v", role, name, err)
	}
}

// Pooled reports whether the tests' roles connect through a pooler: the
// URL they use reaches another address than the admin URL.
func Pooled(t testing.TB) bool {
	t.Helper()
	Admin(t)
	a, errA := url.Parse(admin)
	c, errC := url.Parse(client)
	return errA == nil && errC == nil && a.Host != c.Host
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

// start brings up a cluster: the one named by TOLLGATE_TEST_PG (and
// TOLLGATE_TEST_PG_ADMIN), or a new one that .ci/postgres starts, so
// that a test run on a workstation sees the same deployment as CI: TLS
// with a certificate checked by name, scram-sha-256 passwords, nothing
// else accepted. It returns the admin URL and the base URL clients use.
func start() (admin, client string, stop func(), err error) {
	if u := os.Getenv("TOLLGATE_TEST_PG"); u != "" {
		admin = os.Getenv("TOLLGATE_TEST_PG_ADMIN")
		if admin == "" {
			admin = u
		}
		return admin, u, nil, nil
	}
	for _, p := range []string{"initdb", "pg_ctl"} {
		if _, err := bin(p); err != nil {
			return "", "", nil, err
		}
	}
	script, err := ciScript("postgres")
	if err != nil {
		return "", "", nil, err
	}
	var stderr strings.Builder
	cmd := exec.Command(script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: %v: %s", script, err, stderr.String())
	}
	dir, u, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		return "", "", nil, fmt.Errorf("%s printed %q, not a folder and a URL", script, out)
	}
	stop = func() { exec.Command(script, "stop", dir).Run() }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", u)
	if err == nil {
		err = db.PingContext(ctx)
		db.Close()
	}
	if err != nil {
		stop()
		return "", "", nil, fmt.Errorf("connect to the test cluster: %w", err)
	}
	return u, u, stop, nil
}

// ciScript finds .ci/NAME in the repository the tests run in (go test
// runs a package's tests in its folder).
func ciScript(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ".ci", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no .ci/%s above the test's folder to start a cluster with (or set TOLLGATE_TEST_PG)", name)
		}
		dir = up
	}
}
