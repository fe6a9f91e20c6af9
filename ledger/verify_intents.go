package ledger

import (
	"context"
	"database/sql"
)

// verifyIntentRoles names, on a PostgreSQL ledger of schema 40 or later,
// each intent with no payload and no archive stub that a login role other
// than the schema's owner wrote. Only the owner records a key outside
// tollgate (a copy of a ledger that holds the seed fixture's intents);
// from schema 40 the database refuses such an intent from any other role
// at its commit, so one verify finds was written past that check
// (issue 41: an agent's role squatted a key with tollgate_record_intent,
// and bot2's honest guard of it answered 77 for ever). Rows written
// before schema 40 record no role and stay counted as external.
func verifyIntentRoles(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	if !tx.onServer() {
		return nil
	}
	var has bool
	if err := tx.QueryRowContext(ctx, intentRoleColumn).Scan(&has); err != nil || !has {
		return err
	}
	rows, err := queryRows(ctx, tx, squattedIntents, nil, func(r *sql.Rows, v *[2]string) error { return r.Scan(&v[0], &v[1]) })
	if err != nil {
		return err
	}
	for _, v := range rows {
		// verifyPayloads counted it as external: it is not.
		rep.External--
		rep.add("intents", "action_key="+v[0], v[0], "an intent with no payload, written by the login role %s, not the schema's owner: "+
			"only the owner records a key outside tollgate; any other role's key carries its payload and its event (schema 40)", v[1])
	}
	return nil
}

const (
	// intentRoleColumn asks whether intents record their writer (schema 40).
	intentRoleColumn = `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'intents' AND column_name = 'db_role')`
	// squattedIntents lists the payload-less, unarchived intents a role
	// other than the owner of the schema tollgate_private wrote.
	squattedIntents = `SELECT i.action_key, i.db_role FROM intents i
		WHERE i.db_role IS NOT NULL AND NOT EXISTS (SELECT 1 FROM payloads p WHERE p.action_key = i.action_key)
			AND NOT EXISTS (SELECT 1 FROM archived_keys a WHERE a.action_key = i.action_key)
			AND i.db_role <> (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'tollgate_private')
		ORDER BY i.action_key`
)
