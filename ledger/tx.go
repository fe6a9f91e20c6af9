package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Tx is one ledger transaction. Helpers take a *Tx; only public Store
// methods begin and end one. Its statements are prepared once per pool
// and reused, because modernc.org/sqlite otherwise compiles every
// statement on every call, which costs more than the work itself; a
// one-shot store prepares them once per transaction instead.
type Tx struct {
	tx    *sql.Tx
	cache *stmtCache
	local map[string]*sql.Stmt // see stmt
	// head is the chain head this transaction last appended: the write
	// lock is held, so no one else can move it (appendEvent).
	head *Head
	// id caches the ledger id for the writer (ledgerID); nil in reads,
	// which read the file's row each time.
	id *idCache
	// now is the transaction's time in milliseconds: the injected clock,
	// read once when the transaction began, so every fact it writes and
	// every deadline it compares agree.
	now int64
	// lock is the engine's LockSuffix, set on a writing transaction: what
	// reading the chain head appends to hold it until commit.
	lock string
	// saved is the chain head as read at the start of this transaction's
	// first append; saveHead advances the stored head from it.
	saved *Head
	// migrating is set in a migration's step, which may run before the
	// chain head was a row of its own.
	migrating bool
	// server is set on an engine whose roles may not write the chain or
	// the projection (PostgreSQL): events are appended, the head locked
	// and the projection derived by the schema's own functions.
	server bool
	// keyLock is the logical key a key transaction (Store.writeKey) locked
	// on PostgreSQL; its events wait in events until flushEvents appends
	// them, and an event of any other key is refused.
	keyLock string
	// othersKey is set on a key transaction whose key another database
	// role recorded, which the engine did not lock (engine.ErrOthersKey):
	// it may log a conflict and write nothing else (othersKeyWrite).
	othersKey bool
	events    []heldEvent
	// eventsFirst has a key transaction wait for the chain head under
	// its bound (naming the holder), append its events, and only then
	// refresh the projection: a decision, vote or reconciliation counts
	// once an event commits it, so a projection derived before its event
	// would not show it (signedWriteFor).
	eventsFirst bool
	// dirty are the keys whose projection rows a server transaction
	// refreshes before it commits, with the target to take (nil: keep).
	dirty map[string]*string
	// pin, when set, is the context every statement runs under instead of
	// the one passed: in a group commit (group.go) one caller giving up
	// must not interrupt a statement, which would make SQLite roll back
	// the whole transaction, the other callers' writes with it.
	pin context.Context
}

// onServer reports whether this transaction runs on PostgreSQL, reading
// or writing (server is set on writers only): the engine that takes its
// own placeholders.
func (t *Tx) onServer() bool { return t.server || t.cache != nil && t.cache.rebind != nil }

// ctxFor is the context a statement runs under.
func (t *Tx) ctxFor(ctx context.Context) context.Context {
	if t.pin != nil {
		return t.pin
	}
	return ctx
}

// idCache holds the ledger id once read: it is fixed at creation.
type idCache struct {
	mu sync.Mutex
	id string
}

type stmtCache struct {
	db     *sql.DB
	rebind func(string) string // the engine's placeholders; nil keeps ?
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	miss   []string
	// off is set for a one-shot process: it runs each statement once,
	// and preparing it again for reuse would compile it twice.
	off bool
}

func newStmtCache(db *sql.DB, off bool, rebind func(string) string) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, off: off, rebind: rebind}
}

// sql is q as the engine takes it.
func (c *stmtCache) sql(q string) string {
	if c.rebind == nil {
		return q
	}
	return c.rebind(q)
}

// get returns the cached statement for q, or nil when it is not prepared
// yet. Preparing needs a connection, and the writer pool's only connection
// is the one the transaction holds, so misses are prepared after it ends.
func (c *stmtCache) get(q string) *sql.Stmt {
	if c.off {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[q]
	if !ok {
		c.miss = append(c.miss, q)
	}
	return st
}

// fill prepares the queries that missed, once no transaction holds a
// connection of the pool. The lock is not held while preparing: preparing
// waits for a free connection, and a transaction holding one may be
// asking the cache for a statement (get) at that moment, which would wait
// for the lock: two callers of one store deadlocked that way.
func (c *stmtCache) fill(ctx context.Context) {
	c.mu.Lock()
	miss := c.miss
	c.miss = nil
	c.mu.Unlock()
	for _, q := range miss {
		c.mu.Lock()
		_, ok := c.m[q]
		c.mu.Unlock()
		if ok {
			continue
		}
		st, err := c.db.PrepareContext(ctx, c.sql(q))
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, ok := c.m[q]; ok {
			st.Close() // another caller prepared it meanwhile
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// stmt returns q prepared for this transaction, or nil to run it
// unprepared. A one-shot store keeps no pool cache, but a statement used
// twice in one transaction (each event appended) is still compiled once.
func (t *Tx) stmt(ctx context.Context, q string) *sql.Stmt {
	if st := t.cache.get(q); st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	if !t.cache.off {
		return nil
	}
	if st, ok := t.local[q]; ok {
		return st
	}
	st, err := t.tx.PrepareContext(ctx, t.cache.sql(q))
	if err != nil {
		return nil // run unprepared: that reports the error where it is used
	}
	if t.local == nil {
		t.local = map[string]*sql.Stmt{}
	}
	t.local[q] = st
	return st
}

// ExecContext runs a cached statement inside the transaction.
func (t *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = t.ctxFor(ctx)
	if st := t.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, t.cache.sql(q), args...)
}

// QueryContext runs a cached query inside the transaction.
func (t *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = t.ctxFor(ctx)
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, t.cache.sql(q), args...)
}

// QueryRowContext runs a cached single-row query inside the transaction.
func (t *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = t.ctxFor(ctx)
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, t.cache.sql(q), args...)
}

// queryRows runs q inside the transaction and returns one T per row, each
// filled by scan: the loop every multi-row read shares.
func queryRows[T any](ctx context.Context, tx *Tx, q string, args []any, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// othersKeyWrite refuses a write in a transaction on a key another
// database role recorded, which the engine did not lock for this one
// (engine.ErrOthersKey, PostgreSQL from schema 29): an attempt that
// differs from the key's stored payload is logged as a conflict, since
// the stored payload never changes whoever holds the key, but any fact
// that moves the key would race with its owner's transactions.
func othersKeyWrite(tx *Tx) error {
	if tx.othersKey {
		return fmt.Errorf("key %s: %w", tx.keyLock, ErrOthersKey)
	}
	return nil
}
