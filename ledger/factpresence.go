package ledger

import (
	"context"
	"database/sql"
)

// missingFactTables names the fact tables the database does not have:
// none on a ledger at this build's schema (a reading open requires it,
// a writing one migrates), but a PostgreSQL ledger opened below it
// (postgres Options.UpTo: the upgrade tests write at an older schema and
// verify there) has not made the later ones yet, and holds no rows of
// them. SQLite ledgers are always at the build's schema when read.
func missingFactTables(ctx context.Context, tx *Tx) (map[string]bool, error) {
	if !tx.onServer() {
		return nil, nil
	}
	names := make([]string, len(factTables))
	for i := range factTables {
		names[i] = factTables[i].name
	}
	missing := map[string]bool{}
	_, err := queryRows(ctx, tx, "SELECT t FROM unnest(CAST(? AS text[])) t WHERE to_regclass('public.' || quote_ident(t)) IS NULL", []any{names},
		func(r *sql.Rows, name *string) error {
			if err := r.Scan(name); err != nil {
				return err
			}
			missing[*name] = true
			return nil
		})
	return missing, err
}
