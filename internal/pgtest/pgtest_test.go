package pgtest

import (
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestRolesLogInByScramOverTLS: the deployment the tests run on is the
// README's. A test's role logs in over TLS (the session's row in
// pg_stat_ssl, and the client's own socket), its password is stored as a
// SCRAM secret, and the server (or the pooler in front of it) refuses a
// connection without TLS and one with a wrong password.
func TestRolesLogInByScramOverTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := DB(t)
	if q := mustParse(t, u).Query(); q.Get("sslmode") != "verify-full" || q.Get("sslrootcert") == "" {
		t.Fatalf("test URLs do not verify the server's certificate: sslmode=%q sslrootcert=%q", q.Get("sslmode"), q.Get("sslrootcert"))
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("the client's connection is a %T, not TLS", conn.PgConn().Conn())
	}
	var ssl bool
	var version string
	if err := conn.QueryRow(ctx, "SELECT ssl, coalesce(version, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl, &version); err != nil {
		t.Fatal(err)
	}
	if !ssl {
		t.Fatal("pg_stat_ssl: the server's session is not encrypted")
	}
	t.Logf("session encrypted with %s", version)

	admin, err := pgx.Connect(ctx, Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var secret string
	if err := admin.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", mustParse(t, u).User.Username()).Scan(&secret); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "SCRAM-SHA-256$") {
		t.Fatal("the test role's password is not stored as a SCRAM secret")
	}

	plain := mustParse(t, u)
	q := plain.Query()
	q.Set("sslmode", "disable")
	q.Del("sslrootcert")
	plain.RawQuery = q.Encode()
	if c, err := pgx.Connect(ctx, plain.String()); err == nil {
		c.Close(ctx)
		t.Fatal("a connection without TLS was accepted")
	} else if !refused(err) {
		t.Fatalf("a connection without TLS failed, but not by refusal: %v", err)
	}

	wrong := mustParse(t, u)
	wrong.User = url.UserPassword(wrong.User.Username(), Password+"-wrong")
	if c, err := pgx.Connect(ctx, wrong.String()); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password was accepted")
	} else if !refused(err) || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("a wrong password failed, but not by refusal: %v", err)
	}
}

// refused reports whether err is the server's (or pooler's) answer, not a
// network failure: a refusal carries a SQLSTATE.
func refused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

func mustParse(t *testing.T, u string) *url.URL {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal("cannot parse a test URL")
	}
	return p
}
