package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
)

// copyOrder is every table of a ledger in an order that satisfies the
// foreign keys: each table after those it references. The projection is
// copied before intents, so that the intents trigger finds each row there.
var copyOrder = []string{
	"ledger_meta", "events", "action_index", "archives", "archived_keys", "pruned_events", "intents", "payloads", "conflicts", "policy_rules", "policy_evals",
	"approval_requests", "decisions", "permits", "reports", "report_refusals", "reconciliations", "epochs",
	"fenced", "conflict_reviews", "fenced_reviews", "operators", "signatures", "votes", "set_aside",
	"agent_tokens", "principal_names", "permit_attempts",
}

// identityCols are the columns a PostgreSQL sequence numbers: after a
// copy each sequence continues after the largest copied value.
var identityCols = map[string]string{
	"conflicts": "id", "action_index": "id", "policy_rules": "id", "reports": "id", "report_refusals": "id",
	"epochs": "seq", "fenced": "id", "operators": "id", "signatures": "id", "votes": "id", "set_aside": "id",
	"agent_tokens": "id", "principal_names": "id",
}

// CopyToPostgres copies the ledger at src (an SQLite file, read in one
// snapshot and never changed) into the empty PostgreSQL database at dst:
// every fact, signature and event as stored, its identity and its chain
// head, in one transaction, so the copy exists whole or not at all. It
// then verifies the copy and returns its head, which is the source's.
func CopyToPostgres(ctx context.Context, src, dst string) (Head, error) {
	if !postgres.IsURL(dst) {
		return Head{}, fmt.Errorf("%w: the copy's target must be a postgres:// URL", ErrInvalidInput)
	}
	from, err := Open(ctx, src, Options{ReadOnly: true})
	if err != nil {
		return Head{}, err
	}
	defer from.Close()
	rep, err := from.Verify(ctx)
	if err != nil {
		return Head{}, err
	}
	if !rep.OK() {
		return Head{}, fmt.Errorf("%w: %s does not verify (%d problems, the first: %s); copy only a ledger that proves itself", ErrInvalidInput, from.Path(), len(rep.Problems), rep.Problems[0])
	}
	eng, err := postgres.Open(ctx, dst, postgres.Options{Empty: true})
	if err != nil {
		return Head{}, err
	}
	err = engine.Retry(ctx, eng, func() error { return copyRows(ctx, from, eng) })
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Head{}, fmt.Errorf("copy %s into %s: %w; nothing was kept in the target", from.Path(), postgres.Redact(dst), err)
	}
	to, err := Open(ctx, dst, Options{ReadOnly: true})
	if err != nil {
		return Head{}, err
	}
	defer to.Close()
	got, err := to.Verify(ctx)
	if err != nil {
		return Head{}, err
	}
	if gh, rh := got.Head(), rep.Head(); !got.OK() || gh.LedgerID != rh.LedgerID || gh.Seq != rh.Seq || gh.Hash != rh.Hash {
		return Head{}, fmt.Errorf("the copy in %s does not prove the source's head (seq %d %s; the copy: seq %d %s, %d problems)",
			to.Path(), rep.Events, rep.ChainHead, got.Events, got.ChainHead, len(got.Problems))
	}
	return got.Head(), nil
}

// copyRows copies every table in one writing transaction of the target,
// reading the source in one snapshot.
func copyRows(ctx context.Context, from *Store, eng *postgres.Engine) error {
	tx, err := eng.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The schema was created without the state machine's step (the copy
	// brings its own identity): the projection function is made here.
	if err := createServerFunctions(ctx, tx); err != nil {
		return err
	}
	// The copied facts were checked where they were made, at their own
	// times: the database's policy triggers (schema 11) let its owner's
	// copy through, and the copied conditions are translated after.
	if _, err := tx.ExecContext(ctx, "SET LOCAL tollgate.copying = 'on'"); err != nil {
		return err
	}
	err = from.readOnce(ctx, func(rtx *Tx) error {
		for _, table := range copyOrder {
			if err := copyTable(ctx, rtx, tx, table, postgres.Rebind); err != nil {
				return fmt.Errorf("table %s: %w", table, err)
			}
		}
		var h Head
		if err := rtx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&h.Seq, &h.Hash); err != nil {
			return err
		}
		if h.Seq > 0 {
			if _, err := tx.ExecContext(ctx, "UPDATE chain_head SET seq = $1, hash = $2 WHERE one = 1", h.Seq, h.Hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := fillConditionASTs(ctx, &Tx{tx: tx, cache: newStmtCache(nil, true, postgres.Rebind), server: true}); err != nil {
		return err
	}
	for table, col := range identityCols {
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce(max(%s), 0) + 1, false) FROM %s", postgres.Table(table), col, col, table)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sequence of %s: %w", table, err)
		}
	}
	return tx.Commit()
}

// copyTable copies one table's rows from an SQLite source, many per
// statement, column by column as the source names them; rebind gives the
// target's placeholders.
func copyTable(ctx context.Context, src *Tx, dst *sql.Tx, table string, rebind func(string) string) error {
	cols, err := storedColumns(ctx, src, table)
	if err != nil {
		return err
	}
	return copyColumns(ctx, src, dst, table, postgres.Table(table), strings.Join(cols, ", "), rebind)
}

// storedColumns names an SQLite table's columns in order, without its
// generated ones (the projection's answer, schema 12), which a target
// computes itself and refuses to be given.
func storedColumns(ctx context.Context, tx *Tx, table string) ([]string, error) {
	return queryRows(ctx, tx, "SELECT name FROM pragma_table_info('"+table+"') ORDER BY cid", nil,
		func(r *sql.Rows, c *string) error { return r.Scan(c) })
}

// copyColumns is copyTable for the columns cols names ("*": all), into
// the target's table into (a PostgreSQL view's base table, say).
func copyColumns(ctx context.Context, src *Tx, dst *sql.Tx, table, into, cols string, rebind func(string) string) error {
	rows, err := src.QueryContext(ctx, "SELECT "+cols+" FROM "+table)
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	const batch = 200
	var vals []any
	flush := func() error {
		if len(vals) == 0 {
			return nil
		}
		n := len(vals) / len(names)
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", into, strings.Join(names, ", "))
		for r := 0; r < n; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?" + strings.Repeat(", ?", len(names)-1) + ")")
		}
		_, err := dst.ExecContext(ctx, rebind(b.String()), vals...)
		vals = vals[:0]
		return err
	}
	for rows.Next() {
		row, err := scanFact(rows, len(names))
		if err != nil {
			return err
		}
		vals = append(vals, row...)
		if len(vals) >= batch*len(names) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// copyToSQLite writes the ledger from (read in one snapshot) into a new
// SQLite file at dst: every row of every table as stored, and its chain
// head, in one transaction. It is how an archive of a PostgreSQL ledger
// is made (an archive is a ledger file); the caller seals and verifies it.
func copyToSQLite(ctx context.Context, from *Store, dst string) error {
	// No state machine step: the copy brings its own identity.
	eng, err := sqlite.Open(ctx, dst, sqlite.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	tx, err := eng.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The intents trigger refuses an intent whose projection row exists,
	// which a copy brings first: it is lifted inside this transaction.
	var trig string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'intents_index'").Scan(&trig); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DROP TRIGGER intents_index"); err != nil {
		return err
	}
	same := func(q string) string { return q }
	err = from.readOnce(ctx, func(rtx *Tx) error {
		for _, table := range copyOrder {
			// The file's columns: PostgreSQL keeps a little more (a
			// decision's database role), which no row hash covers.
			cols, err := storedColumns(ctx, &Tx{tx: tx, cache: newStmtCache(nil, true, nil)}, table)
			if err != nil {
				return err
			}
			if err := copyColumns(ctx, rtx, tx, table, table, strings.Join(cols, ", "), same); err != nil {
				return fmt.Errorf("table %s: %w", table, err)
			}
		}
		var h Head
		if err := rtx.QueryRowContext(ctx, "SELECT seq, hash FROM chain_head WHERE one = 1").Scan(&h.Seq, &h.Hash); err != nil {
			return err
		}
		if h.Seq > 0 {
			_, err := tx.ExecContext(ctx, "UPDATE chain_head SET seq = ?, hash = ? WHERE one = 1", h.Seq, h.Hash)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, trig); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return eng.Close()
}
