package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// State is where an action stands. It is derived from the facts; each
// step that led to it is its own append-only row.
type State string

// The states of an action (SPEC 4), plus Denied for a policy deny.
const (
	StateRecorded   State = "recorded"
	StatePending    State = "pending"
	StateApproved   State = "approved"
	StateDenied     State = "denied"
	StateRejected   State = "rejected"
	StateExpired    State = "expired"
	StateExecuting  State = "executing"
	StateUncertain  State = "uncertain"
	StateSucceeded  State = "succeeded"
	StateFailed     State = "failed"
	StateReconciled State = "reconciled"
)

// States lists every state, in the order of the lifecycle. It returns a
// new slice, so no caller can change another's.
func States() []State {
	return []State{StateRecorded, StatePending, StateApproved, StateDenied, StateRejected,
		StateExpired, StateExecuting, StateUncertain, StateSucceeded, StateFailed, StateReconciled}
}

// DecisionKind is an operator's answer to an approval request.
type DecisionKind string

// The two decisions.
const (
	DecisionApproved DecisionKind = "approved"
	DecisionRejected DecisionKind = "rejected"
)

// Result is an operator's settlement of an uncertain action.
type Result string

// The two reconciliation results.
const (
	ResultExecuted    Result = "executed"
	ResultNotExecuted Result = "not-executed"
)

// ParseResult checks a reconciliation result given by a user.
func ParseResult(s string) (Result, error) {
	switch Result(s) {
	case ResultExecuted, ResultNotExecuted:
		return Result(s), nil
	}
	return "", fmt.Errorf("%w: result %q: use executed or not-executed", ErrInvalidInput, s)
}

// safeNewKey is the one rule for safe_new_key: the key ended without
// executing (rejected, expired, reconciled not-executed) or after a
// failure, so a new reviewed operation under a new key is the way on.
func safeNewKey(st State, result Result) bool {
	switch st {
	case StateRejected, StateExpired, StateFailed:
		return true
	case StateReconciled:
		return result == ResultNotExecuted
	}
	return false
}

// disagrees reports whether a worker's outcome contradicts an operator's
// reconciliation.
func disagrees(outcome Outcome, result Result) bool {
	return result == ResultExecuted && outcome == Failed || result == ResultNotExecuted && outcome == Succeeded
}

// ParseState checks a state name given by a user.
func ParseState(s string) (State, error) {
	for _, st := range States() {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("%w: unknown state %q (one of recorded, pending, approved, denied, rejected, expired, executing, uncertain, succeeded, failed, reconciled)", ErrInvalidInput, s)
}

// stateFrom derives the state from the index's stage and deadline: a
// pending request past its deadline is expired and a permit past its lease
// is uncertain, without anyone writing at that moment.
func stateFrom(stage State, deadline, now int64) State {
	switch {
	case stage == StatePending && now >= deadline:
		return StateExpired
	case stage == StateExecuting && now >= deadline:
		return StateUncertain
	}
	return stage
}

// openStages is the WHERE term of the partial index action_index_open
// (migration 0012): the stages of actions still waiting on someone. A
// query for them repeats it word for word, because SQLite uses a partial
// index only when the query's WHERE has the index's term (it does not
// prove that stage = 'pending' implies it); TestOpenWorkUsesThePartialIndex
// reads the plans.
const openStages = "stage IN ('pending', 'approved', 'executing', 'uncertain')"

// stateSQL returns a WHERE fragment over action_index selecting one state.
// Open work is found through the partial index; a settled state is a
// scan of the projection (settled history is read by key, in chain order,
// or by a scan that shows its progress: Filter.MinID).
func stateSQL(st State, now int64) (string, []any) {
	switch st {
	case StatePending:
		return openStages + " AND stage = 'pending' AND deadline_ms > ?", []any{now}
	case StateExpired:
		return openStages + " AND stage = 'pending' AND deadline_ms <= ?", []any{now}
	case StateExecuting:
		return openStages + " AND stage = 'executing' AND deadline_ms > ?", []any{now}
	case StateUncertain:
		return openStages + " AND stage IN ('uncertain', 'executing') AND (stage = 'uncertain' OR deadline_ms <= ?)", []any{now}
	case StateApproved:
		return openStages + " AND stage = 'approved'", nil
	}
	return "stage = ?", []any{string(st)}
}

// indexRow is one key's row of the action index.
type indexRow struct {
	Key      string
	Kind     string
	Agent    string
	Stage    State
	Deadline int64
	SHA256   string
	Retained bool
	Redacted bool
	// Context is the digest of the context the key was guarded with,
	// empty for none.
	Context string
}

// fastCols is the part of a key's index row that answers an identical
// retry, as one text value: the expression of the projection's generated
// column answer (migration 0012 on both engines; until then a covering
// index's, migration 0004), which TestAnswerColumn compares with it on
// every row. Stored with the row, so a retry reads one column and
// evaluates nothing. One value rather
// than seven columns: each column a query returns costs the driver three
// calls into SQLite (type, length, text), which made a retry a third
// slower than a bare primary-key SELECT. The fields of fixed shape come
// first (a 64-character digest, a stage word, an integer, one digit of
// flags, the context's digest or nothing, a space) and the agent name,
// which may hold any character, is the remainder, so nothing in it can
// shift a field. Kind is not read: a
// payload with the stored digest has the stored kind.
const fastCols = "payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent"

// fastQuery is the lookup of an identical retry: on SQLite one search of
// the projection, which is keyed by the action key (schema 12), for one
// stored column.
const fastQuery = "SELECT answer FROM action_index WHERE action_key = ?"

// fastLookup answers the common case, an identical retry, with one
// statement outside any transaction (a single statement is its own
// snapshot) and without taking the write lock. It reports false when
// the key is unknown, its digest differs from the payload's, or the row
// cannot be read: the caller then takes the full, transactional path.
func (s *Store) fastLookup(ctx context.Context, key, kind, digest, contextDigest string) (indexRow, bool) {
	r, found, _ := s.indexLookup(ctx, key, kind)
	return r, found && r.SHA256 == digest && r.Context == contextDigest
}

// indexLookup is fastLookup's read of the key's projection row (an
// archived key's stub) whatever its digest: found is false when the key
// has none, read false when the store could not tell (no fast path, a
// failure, a row it cannot unpack).
func (s *Store) indexLookup(ctx context.Context, key, kind string) (r indexRow, found, read bool) {
	r = indexRow{Key: key, Kind: kind}
	ctx, cancel := s.statementCtx(ctx)
	defer cancel()
	var row *sql.Row
	switch {
	case s.fast != nil:
		row = s.fast.QueryRowContext(ctx, key)
	case s.one:
		// A one-shot process has only the writer connection; outside a
		// transaction a query on it takes no write lock, so an agent
		// polling a pending key does not queue behind writers. It asks
		// once, so the query is not kept prepared.
		row = s.w.QueryRowContext(ctx, s.eng.Rebind(fastQuery), key)
	default:
		return r, false, false
	}
	var packed string
	err := row.Scan(&packed)
	if errors.Is(err, sql.ErrNoRows) && s.archived.Load() {
		// Not in the projection, on a ledger that has archived keys:
		// perhaps one of them (archive.go), answered by its stub. A ledger
		// without archives pays nothing: a live retry is one statement
		// (a compound one cost a retry a tenth of its speed), and a new
		// key one round trip.
		if s.fastArchived != nil {
			row = s.fastArchived.QueryRowContext(ctx, key)
		} else {
			row = s.w.QueryRowContext(ctx, s.eng.Rebind(fastArchivedQuery), key)
		}
		err = row.Scan(&packed)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, true
	case err != nil:
		return r, false, false
	}
	ok := r.unpack(packed)
	return r, ok, ok
}

// fastArchivedQuery packs an archived key's stub as fastCols packs an
// index row: its final state, no deadline, no retained payload.
const fastArchivedQuery = "SELECT i.payload_sha256 || ak.state || ' 0 0' || ak.context_sha256 || ' ' FROM archived_keys ak JOIN intents i ON i.action_key = ak.action_key WHERE ak.action_key = ?"

// epochIs reports whether epoch is the active one ("" when none was ever
// activated), read as fastLookup reads, outside any transaction. Any
// failure answers false: the caller then takes the full path.
func (s *Store) epochIs(ctx context.Context, epoch string) bool {
	db := s.r
	if s.one {
		db = s.w
	}
	if db == nil {
		return false
	}
	var active string
	err := db.QueryRowContext(ctx, "SELECT epoch FROM epochs ORDER BY seq DESC LIMIT 1").Scan(&active)
	if errors.Is(err, sql.ErrNoRows) {
		return epoch == ""
	}
	return err == nil && active == epoch
}

// refreshIndex has the database derive a key's projection row from its
// facts (PostgreSQL, where no role may write the projection): the stage,
// deadline and times the facts say, whatever the caller believes. target
// is taken only when its SHA-256 is the payload's target digest; nil
// keeps the row's.
//
// A transaction that moves a key more than once (a guard records it, then
// issues its permit) refreshes it once, just before it commits
// (flushIndex): the row is derived from the facts as they then stand.
func refreshIndex(_ context.Context, tx *Tx, key string, target *string) error {
	if err := othersKeyWrite(tx); err != nil {
		return err
	}
	if tx.dirty == nil {
		tx.dirty = map[string]*string{}
	}
	if prev, ok := tx.dirty[key]; !ok || target != nil || prev == nil {
		if target == nil && ok {
			target = prev
		}
		tx.dirty[key] = target
	}
	return nil
}

// flushIndex refreshes the projection rows of the keys tx moved, in key
// order.
func flushIndex(ctx context.Context, tx *Tx) error {
	for _, k := range movedKeys(tx) {
		if _, err := tx.ExecContext(ctx, "SELECT tollgate_refresh_index(?, ?::text)", k, tx.dirty[k]); err != nil {
			return err
		}
	}
	tx.dirty = nil
	return nil
}

// movedKeys are the keys whose projection rows tx refreshes, in key
// order: two transactions refresh shared rows in one order.
func movedKeys(tx *Tx) []string {
	keys := make([]string, 0, len(tx.dirty))
	for k := range tx.dirty {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// refreshIndexSQL creates tollgate_refresh_index on PostgreSQL (schema
// 8's step, replaced at schema 13's): the projection row derived from the
// facts with the very stage, deadline and update-time rules verify checks
// it against. It is PL/pgSQL, not SQL, because a SQL function's body is
// parsed and planned again on every call (1.3 ms of a guard's server time,
// BenchmarkPostgresAgents), while PL/pgSQL keeps the plan for the session.
//
// Its search_path looks in tollgate_private first: from schema 42 the
// projection's table is there, behind a view of its name that hides other
// roles' targets; on an older schema the name finds public's table.
const refreshIndexSQL = `CREATE OR REPLACE FUNCTION tollgate_refresh_index(p_key text, p_target text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = tollgate_private, public, pg_temp AS $fn$
BEGIN
UPDATE action_index x SET stage = s.stage, deadline_ms = s.deadline, updated_ms = s.updated,
    logical_key = s.logical, epoch = s.epoch, kind = s.kind, agent = s.agent, retained = s.retained, redacted = s.redacted,
    context_sha256 = s.context_sha256,
    target = CASE WHEN s.retained = 0 OR s.redacted = 1 THEN ''
        WHEN p_target IS NOT NULL AND encode(sha256(convert_to(p_target, 'UTF8')), 'hex') = s.target_sha256 THEN p_target
        ELSE x.target END
FROM (SELECT ` + stageSQL + ` AS stage, ` + deadlineSQL + ` AS deadline,
        GREATEST(coalesce(pl.recorded_ms, 0), coalesce(e.at_ms, 0), coalesce(q.requested_ms, 0), coalesce(d.at_ms, 0),
            coalesce(p.issued_ms, 0), coalesce(r.at_ms, 0), coalesce(c.at_ms, 0)) AS updated,
        CASE WHEN pl.action_key IS NOT NULL AND i.action_key ~ '^hsr1:[0-9a-f-]{36}:' THEN substr(i.action_key, 43) ELSE i.action_key END AS logical,
        CASE WHEN pl.action_key IS NOT NULL AND i.action_key ~ '^hsr1:[0-9a-f-]{36}:' THEN substr(i.action_key, 6, 36) ELSE '' END AS epoch,
        coalesce(pl.kind, '') AS kind, coalesce(pl.agent, '') AS agent,
        CASE WHEN pl.action_key IS NULL THEN 0 ELSE 1 END AS retained, coalesce(pl.redacted, 0) AS redacted,
        coalesce(pl.target_sha256, '') AS target_sha256, coalesce(pl.context_sha256, '') AS context_sha256` + factsFrom + `
    LEFT JOIN payloads pl ON pl.action_key = i.action_key WHERE i.action_key = p_key) s
WHERE x.action_key = p_key;
END
$fn$`

// refreshIndexGrants give the roles the function instead of the table.
var refreshIndexGrants = []string{
	"REVOKE EXECUTE ON FUNCTION tollgate_refresh_index(text, text) FROM PUBLIC",
	"GRANT EXECUTE ON FUNCTION tollgate_refresh_index(text, text) TO tollgate_agent, tollgate_operator",
}

// createServerFunctions creates tollgate_refresh_index and its grants,
// on a PostgreSQL schema being migrated or made as a copy's target.
func createServerFunctions(ctx context.Context, tx *sql.Tx) error {
	for _, q := range append([]string{refreshIndexSQL}, refreshIndexGrants...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// unpack reads the value fastCols builds.
func (r *indexRow) unpack(v string) bool {
	if len(v) < 64 {
		return false
	}
	r.SHA256, v = v[:64], v[64:]
	stage, v, ok := strings.Cut(v, " ")
	if !ok {
		return false
	}
	deadline, v, ok := strings.Cut(v, " ")
	if !ok || v == "" || v[0] < '0' || v[0] > '3' {
		return false
	}
	d, err := strconv.ParseInt(deadline, 10, 64)
	if err != nil {
		return false
	}
	r.Stage, r.Deadline, r.Retained, r.Redacted = State(stage), d, v[0]&1 != 0, v[0]&2 != 0
	v = v[1:]
	if !strings.HasPrefix(v, " ") {
		if len(v) < 65 || v[64] != ' ' {
			return false
		}
		r.Context, v = v[:64], v[64:]
	}
	r.Agent = v[1:]
	return true
}

// setStage moves the projection; the fact that justifies the move has
// been appended in the same transaction.
func setStage(ctx context.Context, tx *Tx, key string, stage State, deadline, now int64) error {
	if tx.server {
		return refreshIndex(ctx, tx, key, nil)
	}
	_, err := tx.ExecContext(ctx, `UPDATE action_index SET stage = ?, deadline_ms = ?, updated_ms = ? WHERE action_key = ?`,
		stage, deadline, now, key)
	return err
}
