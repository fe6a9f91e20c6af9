package ledger

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// On PostgreSQL no role but the schema's owner writes a table (SPEC 8,
// schema 10): every fact row is inserted by a SECURITY DEFINER function of
// its table, and which of them a role may execute is which facts it may
// write. The state machine inserts facts in one place (insertFact), which
// on such an engine calls the function instead of INSERT: one round trip
// either way. The function takes every column but the row number, in the
// table's order, and refuses any other list.

// insertFactFn prefixes a fact table's name to name its insert function
// on PostgreSQL (ledger/postgres, migration 9), one per table: the
// roles' grants on them say who writes which fact. An agent's role calling
// an operator's (tollgate_insert_decisions) is refused by the database
// (42501), which the engine maps to ErrNotPermitted (exit 77).
const insertFactFn = "tollgate_insert_"

// recordIntentFn inserts an intent into the seed fixture's table.
const recordIntentFn = "tollgate_record_intent"

// serverInsert is insertFact's statement and arguments on an engine whose
// roles write through functions: the function returns the row as stored,
// typed as its table, so the columns read back are those of RETURNING.
func serverInsert(t *factTable, cols string, args []any) (string, []any, error) {
	names := strings.Split(cols, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	vals := make([]*string, len(args))
	for i, a := range args {
		v, err := serverText(a)
		if err != nil {
			return "", nil, fmt.Errorf("%s.%s: %w", t.name, names[min(i, len(names)-1)], err)
		}
		vals[i] = v
	}
	q := "SELECT " + t.cols + " FROM " + insertFactFn + t.name + "(?, ?)"
	return q, []any{names, vals}, nil
}

// serverText is a fact's value in PostgreSQL's text input form, which the
// function casts to its column's type; nil is NULL.
func serverText(v any) (*string, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = x
	case []byte:
		s = `\x` + hex.EncodeToString(x)
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return nil, fmt.Errorf("insertFact: no text form for %T", v)
	}
	return &s, nil
}

// recordIntent inserts key's intent row once, whoever else records it.
func recordIntent(ctx context.Context, tx *Tx, key, digest string) error {
	q := "INSERT INTO intents VALUES (?, ?, 'recorded') ON CONFLICT(action_key) DO NOTHING"
	if tx.server {
		q = "SELECT " + recordIntentFn + "(?, ?)"
	}
	_, err := tx.ExecContext(ctx, q, key, digest)
	return err
}
