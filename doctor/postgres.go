package doctor

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/safetext"
)

// On PostgreSQL the boundary is the database's, not the host's: the
// agent's role must not be able to write a table directly (SPEC 8: its
// roles hold EXECUTE and SELECT only), the role an agent connects as must
// be neither the schema's owner nor a superuser, and the connection must
// not travel in clear between hosts. The answers come from the catalog,
// so they hold whatever client a role uses.

// ledgerSchema is the schema tollgate's migrations create their tables
// in (the engine finds its tables as public.*).
const ledgerSchema = "public"

// Role names the two group roles 'tollgate migrate' creates.
const (
	AgentRole    = "tollgate_agent"
	OperatorRole = "tollgate_operator"
)

// writePrivileges are the table privileges that write a row directly.
var writePrivileges = []string{"INSERT", "UPDATE", "DELETE", "TRUNCATE"}

// directWrites lists "PRIVILEGE on TABLE" for every table, view or
// foreign table in the ledger's schema that role may write directly
// (inherited rights and PUBLIC's included, as has_table_privilege counts
// them; a column-level INSERT or UPDATE counts too), then CREATE on the
// schema, which would let the role put its own objects beside the
// ledger's. exists is false when the role does not exist.
func directWrites(ctx context.Context, conn *pgx.Conn, role string) (writes []string, exists bool, err error) {
	if err := conn.QueryRow(ctx, "SELECT to_regrole($1::text) IS NOT NULL", role).Scan(&exists); err != nil || !exists {
		return nil, exists, err
	}
	rows, err := conn.Query(ctx, `
		SELECT p.priv || ' on ' || c.relname
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN unnest($3::text[]) AS p(priv)
		WHERE n.nspname = $2::text AND c.relkind IN ('r', 'p', 'v', 'f')
		  AND (has_table_privilege($1::text::name, c.oid, p.priv)
		       OR (p.priv IN ('INSERT', 'UPDATE') AND has_any_column_privilege($1::text::name, c.oid, p.priv)))
		ORDER BY c.relname, array_position($3::text[], p.priv)`, role, ledgerSchema, writePrivileges)
	if err != nil {
		return nil, true, err
	}
	writes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, true, err
	}
	var create bool
	if err := conn.QueryRow(ctx, "SELECT has_schema_privilege($1::text::name, $2::text, 'CREATE')", role, ledgerSchema).Scan(&create); err != nil {
		return nil, true, err
	}
	if create {
		writes = append(writes, "CREATE on schema "+ledgerSchema)
	}
	return writes, true, nil
}

// CheckPostgres connects to the ledger's database as dsn says and
// returns the findings about roles, grants and TLS. It only reads the
// catalog.
func CheckPostgres(ctx context.Context, dsn string) []Finding {
	where := postgres.Redact(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return []Finding{fail("pg.connect", "the ledger URL does not parse", "fix --db or TOLLGATE_DB (a libpq URL)")}
	}
	// Each query once, unnamed: behind a pooler in transaction mode
	// (pgbouncer) a statement pgx prepared by name on one server session
	// collides with its twin on the next (42P05), and doctor gains nothing
	// from keeping them.
	if cfg.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return []Finding{fail("pg.connect", fmt.Sprintf("cannot connect to %s: %v", where, err), "doctor reads the catalog as the role the URL names: fix the URL or the server")}
	}
	defer conn.Close(context.Background())
	out := []Finding{connectingRole(ctx, conn, where)}
	for _, r := range []struct {
		role  string
		id    string
		fails bool
	}{{AgentRole, "pg.agent-writes", true}, {OperatorRole, "pg.operator-writes", false}} {
		out = append(out, roleWrites(ctx, conn, r.role, r.id, r.fails))
	}
	out = append(out, encryption(ctx, conn, cfg, where), advisoryGrants(ctx, conn), lockHolders(ctx, conn))
	return out
}

// The advisory lock classes tollgate's functions took or take: the
// ledger-wide lock up to schema 22 (taken shared by every key
// transaction and exclusive by writers of ledger-wide facts; from schema
// 23 it is a relation lock on gateTable), and one lock per logical key.
const (
	ledgerLockClass = 1953459308
	keyLockClass    = 1953459309
)

// gateTable is the table whose relation lock is the ledger-wide lock
// from schema 23: ROW SHARE for key transactions, EXCLUSIVE for writers
// of ledger-wide facts. No role but the schema's owner can take it.
const gateTable = "ledger_gate"

// privateSchema holds the tables no role but the schema's owner reaches
// (schema 10), the gate among them.
const privateSchema = "tollgate_private"

// SlowLockWait is how long a session may wait for one of tollgate's
// locks before doctor names the sessions that hold it: a guard's own
// wait is milliseconds, so a wait of seconds is a holder that does not
// let go.
var SlowLockWait = 5 * time.Second

// advisoryGrants says whether the agent's role may take advisory locks
// itself. PostgreSQL grants pg_advisory_lock to PUBLIC, and a lock taken
// at session level outlives every transaction and every timeout: an
// agent that takes a key's lock that way stops every guard, report and
// decision of that key until its session ends (up to schema 22 the
// ledger-wide lock was an advisory lock too, and stopped them all; from
// schema 23 it is a table lock no agent can take), and locks enough
// values of its own to fill the server's shared lock table stop every
// session that needs a lock. tollgate takes its locks inside
// its SECURITY DEFINER functions, as the schema's owner, so a database
// whose superuser revoked them from PUBLIC (granting them to the owner)
// loses nothing. It warns, and does not fail: a key's lock is still an
// advisory lock (schema 29 kept it, docs/postgres-roles.md), so an agent
// that may take one can stop another's key, but that denies service
// (named within half a second) and forges no approval, which is what
// doctor's exit code answers for (SPEC 7).
func advisoryGrants(ctx context.Context, conn *pgx.Conn) Finding {
	var may bool
	var owner string
	err := conn.QueryRow(ctx, `SELECT to_regrole($1::text) IS NOT NULL
		AND has_function_privilege($1::text::name, 'pg_advisory_lock(integer, integer)', 'EXECUTE'),
		(SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = $2::text)`, AgentRole, ledgerSchema).Scan(&may, &owner)
	switch {
	case err != nil:
		return fail("pg.advisory-locks", fmt.Sprintf("cannot read who may take advisory locks: %v", err), "doctor must read the catalog: fix what the error names")
	case may:
		return warn("pg.advisory-locks", AgentRole+" may take advisory locks itself (PUBLIC may): an agent can take another key's lock for as long as its session lives, and every guard, report and decision of that key is refused, naming it, until an operator ends its session (the ledger-wide lock is a table lock no agent can take, from schema 23; tollgate_lock_key locks no other role's key, from schema 29), or fill the server's lock table until every session fails with 'out of shared memory'",
			"as a superuser, in the ledger's database: "+safetext.Escape(AdvisoryRevokeSQL(owner)))
	}
	return pass("pg.advisory-locks", AgentRole+" takes advisory locks only through tollgate's functions", "no agent can hold a key's lock beyond one of its transactions")
}

// AdvisoryRevokeSQL is the hardening doctor names: the advisory lock
// functions taken from PUBLIC in the ledger's database (pg_catalog's
// functions are each database's own) and given back to owner, the
// schema's owner, whose SECURITY DEFINER functions take tollgate's locks.
func AdvisoryRevokeSQL(owner string) string {
	return `DO $tg$ DECLARE f regprocedure; BEGIN FOR f IN SELECT oid::regprocedure FROM pg_proc WHERE proname LIKE 'pg%advisory%lock%' LOOP ` +
		`EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f); EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, '` +
		strings.ReplaceAll(owner, "'", "''") + `'); END LOOP; END $tg$`
}

// lockHolders names the sessions that hold one of tollgate's locks while
// another has waited for it longer than SlowLockWait: the answer at 3
// a.m. to "why does every guard time out". pg_locks, pg_class and the
// holders' roles are readable by any role (the gate table is found by
// name in the catalog: a role without the schema's USAGE cannot cast its
// name to regclass). ACCESS SHARE on the gate, which any role can take
// by the table's number, conflicts with no lock tollgate takes.
func lockHolders(ctx context.Context, conn *pgx.Conn) Finding {
	rows, err := conn.Query(ctx, `
		SELECT h.pid, coalesce(a.usename::text, '?'), h.mode, h.locktype = 'relation' OR h.classid = $1::int::oid,
		       count(w.pid), extract(epoch FROM max(now() - w.waitstart))::float8
		FROM pg_locks h
		JOIN pg_locks w ON w.locktype = h.locktype AND NOT w.granted AND w.database = h.database AND w.pid <> h.pid
		     AND w.classid IS NOT DISTINCT FROM h.classid AND w.objid IS NOT DISTINCT FROM h.objid
		     AND w.objsubid IS NOT DISTINCT FROM h.objsubid AND w.relation IS NOT DISTINCT FROM h.relation
		     AND now() - w.waitstart > make_interval(secs => $3::float8)
		LEFT JOIN pg_stat_activity a ON a.pid = h.pid
		WHERE h.granted AND h.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND (h.locktype = 'advisory' AND h.classid IN ($1::int::oid, $2::int::oid)
		       OR h.locktype = 'relation' AND h.mode <> 'AccessShareLock' AND h.relation = (SELECT c.oid FROM pg_class c
		          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $4::text AND c.relname = $5::text))
		GROUP BY h.pid, a.usename, h.mode, h.locktype, h.classid
		ORDER BY h.pid`, ledgerLockClass, keyLockClass, SlowLockWait.Seconds(), privateSchema, gateTable)
	if err != nil {
		return fail("pg.lock-holders", fmt.Sprintf("cannot read pg_locks: %v", err), "doctor must read pg_locks: fix what the error names")
	}
	type holder struct {
		pid            int32
		role, mode     string
		ledger         bool
		waiters        int64
		longestSeconds float64
	}
	var hs []holder
	var h holder
	_, err = pgx.ForEachRow(rows, []any{&h.pid, &h.role, &h.mode, &h.ledger, &h.waiters, &h.longestSeconds}, func() error {
		hs = append(hs, h)
		return nil
	})
	if err != nil {
		return fail("pg.lock-holders", fmt.Sprintf("cannot read pg_locks: %v", err), "doctor must read pg_locks: fix what the error names")
	}
	if len(hs) == 0 {
		return pass("pg.lock-holders", fmt.Sprintf("no session has waited over %s for tollgate's locks", SlowLockWait), "guards and decisions are not held up")
	}
	var named []string
	for _, h := range hs {
		what := "a key's lock"
		if h.ledger {
			what = "the ledger-wide lock"
		}
		named = append(named, fmt.Sprintf("pid %d (role %s) holds %s (%s), %d waiting, the longest %.0f s",
			h.pid, safetext.Escape(h.role), what, h.mode, h.waiters, h.longestSeconds))
	}
	return fail("pg.lock-holders", "sessions hold tollgate's locks while others wait: "+strings.Join(named, "; "),
		"end a holder that does not let go: SELECT pg_terminate_backend(PID) as a superuser or a member of pg_signal_backend; then see pg.advisory-locks and idle_in_transaction_session_timeout (docs/postgresql.md)")
}

func connectingRole(ctx context.Context, conn *pgx.Conn, where string) Finding {
	var role, owner string
	var super, ownerRights, agent, operator bool
	err := conn.QueryRow(ctx, `
		SELECT current_user, r.rolsuper, pg_get_userbyid(n.nspowner), pg_has_role(current_user, n.nspowner, 'USAGE'),
		       CASE WHEN to_regrole($2::text) IS NULL THEN false ELSE pg_has_role(current_user, $2::text::name, 'USAGE') END,
		       CASE WHEN to_regrole($3::text) IS NULL THEN false ELSE pg_has_role(current_user, $3::text::name, 'USAGE') END
		FROM pg_roles r, pg_namespace n
		WHERE r.rolname = current_user AND n.nspname = $1::text`, ledgerSchema, AgentRole, OperatorRole).
		Scan(&role, &super, &owner, &ownerRights, &agent, &operator)
	if err != nil {
		return fail("pg.role", fmt.Sprintf("cannot read the connecting role from %s: %v", where, err), "doctor must read pg_roles and pg_namespace: fix what the error names")
	}
	const fix = "agents and operators connect as their own login roles, members of tollgate_agent or tollgate_operator; only tollgate migrate runs as the owner (doctor judges the role in the URL it is given: give it the agents' URL)"
	switch {
	case super:
		return fail("pg.role", fmt.Sprintf("the connecting role %s is a superuser", role), "a superuser bypasses every grant and trigger: "+fix)
	case ownerRights:
		return fail("pg.role", fmt.Sprintf("the connecting role %s is the owner of schema %s (%s) or holds its rights", role, ledgerSchema, owner),
			"the owner writes every table directly: "+fix)
	}
	member := "neither tollgate_agent nor tollgate_operator"
	switch {
	case agent && operator:
		member = "tollgate_agent and tollgate_operator"
	case agent:
		member = "tollgate_agent"
	case operator:
		member = "tollgate_operator"
	}
	return pass("pg.role", fmt.Sprintf("the connecting role %s is neither a superuser nor the schema's owner (a member of %s)", role, member),
		"the database's grants bind it")
}

func roleWrites(ctx context.Context, conn *pgx.Conn, role, id string, fails bool) Finding {
	writes, exists, err := directWrites(ctx, conn, role)
	switch {
	case err != nil:
		return fail(id, fmt.Sprintf("cannot read the privileges of %s: %v", role, err), "doctor must read the catalog: fix what the error names")
	case !exists:
		return fail(id, "there is no role "+role, "tollgate migrate, run as the schema's owner, creates it")
	case len(writes) == 0:
		return pass(id, role+" holds no direct write on the ledger's tables", "it changes the ledger only through tollgate's functions")
	}
	return failOr(fails, id, fmt.Sprintf("%s can write tables directly: %s", role, strings.Join(writes, ", ")),
		"a member can write rows as it likes, beside tollgate's checks (SPEC 8: EXECUTE and SELECT only); revoke them (REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA "+
			ledgerSchema+" FROM "+role+") once the schema writes through its SECURITY DEFINER functions")
}

// encryption asks pg_stat_ssl whether this backend's connection is
// encrypted. A Unix socket or a loopback address never leaves the host,
// so clear text there is no exposure; between hosts it is.
func encryption(ctx context.Context, conn *pgx.Conn, cfg *pgx.ConnConfig, where string) Finding {
	var ssl bool
	var version string
	err := conn.QueryRow(ctx, "SELECT ssl, coalesce(version, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl, &version)
	if err != nil {
		return fail("pg.tls", fmt.Sprintf("cannot read pg_stat_ssl from %s: %v", where, err), "doctor must read pg_stat_ssl: fix what the error names")
	}
	local := strings.HasPrefix(cfg.Host, "/") || cfg.Host == "localhost"
	if ip := net.ParseIP(cfg.Host); ip != nil && ip.IsLoopback() {
		local = true
	}
	verified := cfg.TLSConfig != nil && !cfg.TLSConfig.InsecureSkipVerify
	for _, fb := range cfg.Fallbacks {
		verified = verified && fb.TLSConfig != nil
	}
	switch {
	case !ssl && local:
		return pass("pg.tls", fmt.Sprintf("the connection to %s is not encrypted, but it does not leave this host", where), "use sslmode=verify-full once agents or operators connect from other hosts")
	case !ssl:
		return fail("pg.tls", fmt.Sprintf("the connection to %s is not encrypted", where),
			"passwords, decisions and answers cross the network in clear: turn on ssl on the server and connect with sslmode=verify-full")
	case !verified && !local:
		return warn("pg.tls", fmt.Sprintf("the connection to %s is encrypted (%s) but the server is not verified", where, version),
			"another host can pose as the database: connect with sslmode=verify-full (and sslrootcert)")
	}
	return pass("pg.tls", fmt.Sprintf("the connection to %s is encrypted (%s)", where, version), "nobody on the network reads or changes it")
}
