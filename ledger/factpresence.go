package ledger

import (
	"context"
	"database/sql"
	"slices"
)

// hiddenFactTables names the fact tables verify cannot read here, each
// with why: none on SQLite, whose reader reads every table of a ledger
// at this build's schema. On PostgreSQL a table may be missing (a
// ledger whose schema an operator changed by hand), or closed to the
// session's role: agent_tokens holds the service's
// token digests, which an agent's role may not read (schema 36). Verify
// then proves the events that commit such rows (the chain covers their
// fact hashes) but not the rows, and says so (VerifyReport.Unreadable).
func hiddenFactTables(ctx context.Context, tx *Tx) (map[string]string, error) {
	if !tx.onServer() {
		return nil, nil
	}
	names := make([]string, len(factTables))
	for i := range factTables {
		names[i] = factTables[i].name
	}
	type hidden struct{ name, why string }
	rows, err := queryRows(ctx, tx, `SELECT t, CASE WHEN to_regclass('public.' || quote_ident(t)) IS NULL THEN 'missing' ELSE 'unreadable' END
		FROM unnest(CAST(? AS text[])) t
		WHERE to_regclass('public.' || quote_ident(t)) IS NULL OR NOT has_table_privilege(to_regclass('public.' || quote_ident(t)), 'SELECT')`, []any{names},
		func(r *sql.Rows, h *hidden) error { return r.Scan(&h.name, &h.why) })
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, h := range rows {
		out[h.name] = h.why
	}
	return out, nil
}

// unreadable lists the tables of hidden that exist and the role may not
// read, sorted.
func unreadable(hidden map[string]string) []string {
	var out []string
	for name, why := range hidden {
		if why == "unreadable" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
