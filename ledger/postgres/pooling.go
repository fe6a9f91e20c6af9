package postgres

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pooling. Many sites put pgbouncer in transaction pooling mode in front
// of PostgreSQL: each transaction (each statement outside one) may run on
// a different server session, so nothing may outlive a transaction in a
// session. What tollgate does about each thing that would:
//
//   - Prepared statements. The ledger prepares its statements through
//     database/sql once per store, and pgx would prepare them by name in
//     the server session it happened to hold; pgbouncer before 1.21 does
//     not carry named statements across sessions, so a later transaction
//     would find none, or another client's of the same name. The
//     connector below keeps database/sql's statements client-side and
//     lets pgx run each query in its mode: on a direct connection pgx's
//     own per-connection statement cache (named statements, one round
//     trip once prepared: the stress test's long-lived processes guard
//     about a quarter faster with it), behind a pooler QueryExecModeExec
//     (an unnamed statement parsed, bound and run in one round trip).
//     A URL that sets default_query_exec_mode is obeyed as it is, with
//     no detection (cache_statement behind pgbouncer >= 1.21 with
//     max_prepared_statements, say).
//   - Session settings: the ledger sets none; a transaction's own
//     (BEGIN READ ONLY, the isolation level) end with it.
//   - Advisory locks: only pg_advisory_xact_lock, which ends with the
//     migration's transaction.
//   - LISTEN: see Watch, which proves delivery before it relies on it and
//     polls otherwise.

// connector is pgx's database/sql connector with statements kept
// client-side (see above).
type connector struct {
	driver.Connector
	detect bool // the URL leaves the execution mode to Open
}

// Connect implements driver.Connector. A pooler answers the startup with
// a cancel key of its own, since its client has no one server session:
// when the process id in it is not the server session's, a pooler is in
// between, whatever its kind or port.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc := dc.(*stdlib.Conn)
	cn := &conn{Conn: sc}
	if c.detect {
		var pid int64
		// The simple protocol prepares nothing, pooled or not.
		if err := sc.Conn().QueryRow(ctx, "SELECT pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
			sc.Close()
			return nil, err
		}
		cn.pooled = uint32(pid) != sc.Conn().PgConn().PID()
	}
	return cn, nil
}

// conn is pgx's database/sql connection whose Prepare only remembers the
// query: database/sql's other interfaces (ConnBeginTx, SessionResetter,
// Validator, NamedValueChecker) are pgx's.
type conn struct {
	*stdlib.Conn
	pooled bool // behind a pooler: every query in QueryExecModeExec
}

// execMode leads args with pgx's option for a pooled connection.
func (c *conn) execMode(args []driver.NamedValue) []driver.NamedValue {
	if !c.pooled {
		return args
	}
	return append([]driver.NamedValue{{Value: pgx.QueryExecModeExec}}, args...)
}

// ExecContext implements driver.ExecerContext.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, query, c.execMode(args))
}

// QueryContext implements driver.QueryerContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, query, c.execMode(args))
}

// PrepareContext implements driver.ConnPrepareContext without a round
// trip or a server-side statement.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	return &stmt{c: c, query: query}, nil
}

// Prepare implements driver.Conn.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// stmt runs its query as an ordinary one on its connection.
type stmt struct {
	c     *conn
	query string
}

var errLegacy = errors.New("postgres: the context-free driver.Stmt methods are not supported")

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 } // the server counts them

func (s *stmt) Exec([]driver.Value) (driver.Result, error) { return nil, errLegacy }
func (s *stmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errLegacy }

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, args)
}
