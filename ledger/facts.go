package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// factTable describes one append-only table whose every row is committed
// by exactly one event: the event names the table, the row's key and the
// SHA-256 of the row's columns, and the event's hash covers all three.
// verify reads the same description, so what is written and what is
// proven cannot drift apart.
type factTable struct {
	name string
	// id is the primary key column; intID when it is an INTEGER key.
	id    string
	intID bool
	// cols are every column, in the order the row hash covers them.
	cols string
	// keyCol names the action key column, empty for ledger-wide facts.
	keyCol string
	// events are the event types that may commit a row of this table.
	events []string
	// optional are the trailing columns added after the table's rows
	// were first proven, each with its default: the row hash covers such a
	// column only where its value differs from the default, so older rows
	// stay proven by their events and any change to the column is still
	// seen. Columns added from schema 8 on are hashed with their name, so
	// that two of them of one type cannot stand in for each other.
	optional []optCol
	// since is the schema version that created the table (0: before 5);
	// the schema 5 migration seals only the tables it knows.
	since int
}

// optCol is a column added to a fact table after its first rows.
type optCol struct {
	name   string
	def    any
	tagged bool
}

// approversCol is schema 6's quorum column (hashed without its name).
var approversCol = optCol{name: "approvers", def: int64(1)}

// The fact tables, in the order verify reports them.
var factTables = []factTable{
	{name: "payloads", id: "action_key", cols: "action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context", keyCol: "action_key", events: []string{evRecorded},
		optional: []optCol{{"context_sha256", "", true}, {"context", "", true}}},
	{name: "conflicts", id: "id", intID: true, cols: "id, action_key, stored_sha256, attempted_sha256, attempted, redacted, differs, agent, at_ms", keyCol: "action_key", events: []string{evConflict}},
	{name: "policy_rules", id: "id", intID: true, cols: "id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority", events: []string{evPolicySet},
		optional: []optCol{approversCol, {"condition", "", true}, {"priority", int64(0), true}}, since: 0},
	{name: "policy_evals", id: "action_key", cols: "action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain", keyCol: "action_key", events: []string{evPolicyEvaluated},
		optional: []optCol{approversCol, {"explain", "", true}}},
	{name: "approval_requests", id: "action_key", cols: "action_key, agent, requested_ms, expires_ms", keyCol: "action_key", events: []string{evApprovalRequested}},
	{name: "decisions", id: "action_key", cols: "action_key, decision, operator, reason, at_ms", keyCol: "action_key", events: []string{string(DecisionApproved), string(DecisionRejected)}},
	{name: "permits", id: "action_key", cols: "action_key, permit_id, agent, issued_ms, lease_ms", keyCol: "action_key", events: []string{evPermitIssued}},
	{name: "reports", id: "id", intID: true, cols: "id, action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result", keyCol: "action_key", events: []string{"report_accepted", "report_late", "report_refused"},
		optional: []optCol{{"result", "", true}}},
	{name: "report_refusals", id: "id", intID: true, cols: "id, action_key, permit_id, outcome, ref, latency_ms, rule, at_ms", keyCol: "action_key", events: []string{evReportRefused}},
	{name: "reconciliations", id: "action_key", cols: "action_key, result, operator, note, at_ms", keyCol: "action_key", events: []string{evReconciled}},
	{name: "epochs", id: "seq", intID: true, cols: "seq, epoch, operator, at_ms", events: []string{evEpochActivated}},
	{name: "fenced", id: "id", intID: true, cols: "id, action_key, key_epoch, active_epoch, payload_sha256, agent, reason, at_ms", keyCol: "action_key", events: []string{evFenced}},
	{name: "conflict_reviews", id: "conflict_id", intID: true, cols: "conflict_id, operator, note, at_ms", events: []string{evConflictReviewed}},
	{name: "fenced_reviews", id: "fenced_id", intID: true, cols: "fenced_id, operator, note, at_ms", events: []string{evFencedReviewed}},
	{name: "ledger_meta", id: "one", intID: true, cols: "one, ledger_id, created_ms", events: []string{evLedgerCreated}},
	{name: "operators", id: "id", intID: true, cols: "id, name, name_key, action, public_key, fingerprint, at_ms", events: []string{evOperatorAdded, evOperatorRemoved}, since: 6},
	{name: "votes", id: "id", intID: true, cols: "id, action_key, decision, operator, name_key, reason, at_ms", keyCol: "action_key", events: []string{evVote}, since: 6},
	{name: "signatures", id: "id", intID: true, cols: "id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms", events: []string{evSigned}, since: 6},
	{name: "archives", id: "id", intID: true, cols: "id, file, ledger_id, through_seq, through_hash, head_seq, head_hash, keys, keys_sha256, spans, spans_sha256, settled_before_ms, operator, at_ms",
		events: []string{evCheckpoint}, since: 9},
	{name: "set_aside", id: "id", intID: true, cols: "id, action_key, fact_table, row_json, operator, at_ms", keyCol: "action_key", events: []string{evSetAside}, since: 9},
	{name: "permit_attempts", id: "action_key", cols: "action_key, permit_id, agent, attempt_sha256, at_ms", keyCol: "action_key", events: []string{evAttemptRecorded}, since: 20},
	{name: "agent_tokens", id: "id", intID: true, cols: "id, token_id, action, name, name_key, scope, digest, operator, at_ms", events: []string{evTokenCreated, evTokenRevoked}, since: 19},
	{name: "principal_names", id: "id", intID: true, cols: "id, who, who_key, agent, agent_key, action, operator, at_ms", events: []string{evPrincipalAllowed, evPrincipalRevoked}, since: 19},
}

// Event types. An event either commits one fact row or, for the few in
// factlessEvents, records something derived from facts already proven.
const (
	evRecorded          = "recorded"
	evConflict          = "conflict"
	evPolicySet         = "policy_set"
	evPolicyEvaluated   = "policy_evaluated"
	evApprovalRequested = "approval_requested"
	evPermitIssued      = "permit_issued"
	evReportRefused     = "report_refused_unfiled"
	evReconciled        = "reconciled"
	evEpochActivated    = "epoch_activated"
	evFenced            = "fenced"
	evConflictReviewed  = "conflict_reviewed"
	evFencedReviewed    = "fenced_reviewed"
	evLedgerCreated     = "ledger_created"
	evSealed            = "sealed"
	evDisagreement      = "disagreement_flagged"
	evOperatorAdded     = "operator_added"
	evOperatorRemoved   = "operator_removed"
	evVote              = "vote"
	evSigned            = "signed"
	evSetAside          = "set_aside"
)

// factlessEvents commit no row: a flagged disagreement is derived from a
// report and a reconciliation that are themselves proven.
// The schema 8 marker commits no row either: it says where version 1
// statements end (authority.go).
var factlessEvents = map[string]bool{evDisagreement: true, evStatementsV2: true, evArchiveSealed: true}

func factTableNamed(name string) *factTable {
	for i := range factTables {
		if factTables[i].name == name {
			return &factTables[i]
		}
	}
	return nil
}

// factRef is what an event commits of its fact row.
type factRef struct {
	Table  string
	Row    string
	SHA256 string
	// vals are the row's columns as stored, when the ref was made from
	// them (insertFact): a signature is made over what they say.
	vals []any
}

// rowHash is the SHA-256 over a fact row's table name and column values,
// each written with a type tag and its length so that no two different
// rows encode alike.
func rowHash(table string, vals []any, optional []optCol) string {
	b := make([]byte, 0, 256)
	put := func(tag byte, s string) {
		b = append(b, tag)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	put('t', table)
	for i, v := range vals {
		if j := i - (len(vals) - len(optional)); j >= 0 {
			if v == optional[j].def {
				continue
			}
			if optional[j].tagged {
				put('c', optional[j].name)
			}
		}
		switch x := v.(type) {
		case nil:
			put('n', "")
		case int64:
			put('i', strconv.FormatInt(x, 10))
		case string:
			put('s', x)
		case []byte:
			put('b', string(x))
		case float64:
			put('f', strconv.FormatFloat(x, 'g', -1, 64))
		default:
			put('?', fmt.Sprint(x))
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// scanFact reads one fact row's columns as the driver returns them.
func scanFact(sc interface{ Scan(...any) error }, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := sc.Scan(ptrs...); err != nil {
		return nil, err
	}
	return vals, nil
}

func (t *factTable) ncols() int { return strings.Count(t.cols, ",") + 1 }

// value returns the named column of one of the table's rows as text.
func (t *factTable) value(vals []any, col string) string {
	for i, c := range strings.Split(t.cols, ", ") {
		if c == col && i < len(vals) {
			if b, ok := vals[i].([]byte); ok {
				return string(b)
			}
			return fmt.Sprint(vals[i])
		}
	}
	return ""
}

// colText is a column value as text, the way fmt.Sprint writes it, without
// fmt's cost on the two types ids and keys have: verify and export call it
// for every row.
func colText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

func (t *factTable) ref(vals []any) factRef {
	return factRef{Table: t.name, Row: colText(vals[0]), SHA256: rowHash(t.name, vals, t.optional), vals: vals}
}

// insertFact inserts one row into an append-only table and returns what
// its event must commit: the row as stored (RETURNING), so the hash is of
// exactly what verify will read back.
func insertFact(ctx context.Context, tx *Tx, table, cols string, args ...any) (factRef, error) {
	t := factTableNamed(table)
	if t == nil {
		return factRef{}, fmt.Errorf("insertFact: %s is not a fact table", table)
	}
	if table != "conflicts" {
		if err := othersKeyWrite(tx); err != nil {
			return factRef{}, err
		}
	}
	q := "INSERT INTO " + table + "(" + cols + ") VALUES (?" + strings.Repeat(", ?", len(args)-1) + ") RETURNING " + t.cols
	if tx.server {
		var err error
		if q, args, err = serverInsert(t, cols, args); err != nil {
			return factRef{}, err
		}
	}
	vals, err := scanFact(tx.QueryRowContext(ctx, q, args...), t.ncols())
	if err != nil {
		return factRef{}, err
	}
	return t.ref(vals), nil
}

// rowID returns a fact's integer row id (for tables keyed by one).
func (f factRef) rowID() int64 {
	n, _ := strconv.ParseInt(f.Row, 10, 64)
	return n
}

// sealFacts appends one 'sealed' event for every fact row no event
// commits: the rows a ledger held before schema 5 made events commit
// their rows. From then on verify proves they have not changed. It runs
// inside the schema 5 migration, so it reads only what schema 5 has; the
// columns added later are hashed as their default, which they then hold.
func sealFacts(ctx context.Context, tx *Tx, now int64) error {
	for i := range factTables {
		t := &factTables[i]
		if t.since > 5 {
			continue
		}
		cols := t.cols
		for range t.optional {
			cols = cols[:strings.LastIndex(cols, ",")]
		}
		q := "SELECT " + cols + " FROM " + t.name + " t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.fact_table = '" +
			t.name + "' AND e.fact_row = CAST(t." + t.id + " AS TEXT)) ORDER BY t." + t.id
		rows, err := queryRows(ctx, tx, q, nil, func(r *sql.Rows, v *[]any) error {
			var err error
			*v, err = scanFact(r, t.ncols()-len(t.optional))
			for _, o := range t.optional {
				*v = append(*v, o.def)
			}
			return err
		})
		if err != nil {
			return err
		}
		for _, vals := range rows {
			key := ""
			if t.keyCol != "" {
				key = fmt.Sprint(vals[0])
				if t.keyCol != t.id {
					key = fmt.Sprint(vals[1])
				}
			}
			ref := t.ref(vals)
			if err := appendEvent(ctx, tx, key, evSealed, "tollgate", map[string]any{"table": t.name}, now, &ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyFacts is what the append-only facts say about one key, read inside
// the transaction that acts on it. Nothing that grants (a permit, a
// decision, a reconciliation, a settled answer) reads the projection.
type keyFacts struct {
	Stage    State
	Deadline int64
	// Reason is the rejection's reason; Result the reconciliation's.
	Reason string
	Result Result
	// Policy is the evaluated mode, empty before the first guard.
	Policy string
	// The intent's own facts, from its payload row: empty agent and kind
	// and Retained false for an intent recorded outside tollgate.
	Agent    string
	Kind     string
	Retained bool
	Redacted bool
}

// stageSQL derives a key's stage from its facts; deadlineSQL the deadline
// that goes with it. Both run over the joins of factsFrom, for one key
// (loadFacts) or every key (verify), so the rule is written once.
const (
	stageSQL = `CASE
		WHEN c.action_key IS NOT NULL THEN 'reconciled'
		WHEN r.outcome = 'unknown' THEN 'uncertain'
		WHEN r.outcome IS NOT NULL THEN r.outcome
		WHEN p.action_key IS NOT NULL THEN 'executing'
		WHEN d.decision IS NOT NULL THEN d.decision
		WHEN q.action_key IS NOT NULL THEN 'pending'
		WHEN e.mode = 'deny' THEN 'denied'
		ELSE 'recorded'
	END`
	deadlineSQL = `CASE
		WHEN c.action_key IS NULL AND r.outcome IS NULL AND p.action_key IS NOT NULL THEN p.lease_ms
		WHEN p.action_key IS NULL AND d.decision IS NULL AND q.action_key IS NOT NULL THEN q.expires_ms
		ELSE 0
	END`
	factsFrom = ` FROM intents i
		LEFT JOIN reconciliations c ON c.action_key = i.action_key
		LEFT JOIN reports r ON r.action_key = i.action_key AND r.kind = 'accepted'
		LEFT JOIN permits p ON p.action_key = i.action_key
		LEFT JOIN decisions d ON d.action_key = i.action_key` + committedDecision + `
		LEFT JOIN approval_requests q ON q.action_key = i.action_key
		LEFT JOIN policy_evals e ON e.action_key = i.action_key`
)

// committedDecision qualifies a join of decisions d: only a row that an
// event commits is a decision. A row inserted by hand (no event) is
// evidence of tampering, which verify names and status shows as forged;
// it never decides a key's state, blocks an operator's decision or
// justifies a permit.
const committedDecision = " AND EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'decisions' AND ev.fact_row = d.action_key)"

// archivedJoin joins a key's archive stub (archive.go): an archived key
// keeps its intent and its final state, and nothing else.
const archivedJoin = " LEFT JOIN archived_keys ak ON ak.action_key = i.action_key"

// factsSQL is what loadFacts reads of the key its one parameter names,
// scanned into keyFacts.dest.
const factsSQL = "SELECT coalesce(ak.state, " + stageSQL + "), " + deadlineSQL +
	", coalesce(d.reason, ''), coalesce(c.result, ak.result, ''), coalesce(e.mode, ''), coalesce(pl.agent, ''), coalesce(pl.kind, '')," +
	" pl.action_key IS NOT NULL, coalesce(pl.redacted, 0)" + factsFrom +
	" LEFT JOIN payloads pl ON pl.action_key = i.action_key" + archivedJoin + " WHERE i.action_key = ?"

// dest is where factsSQL's columns scan to, the stage into stage.
func (f *keyFacts) dest(stage *string) []any {
	return []any{stage, &f.Deadline, &f.Reason, &f.Result, &f.Policy, &f.Agent, &f.Kind, &f.Retained, &f.Redacted}
}

// loadFacts reads one key's stage from the facts inside tx; an archived
// key's is its stub's.
func loadFacts(ctx context.Context, tx *Tx, key string) (keyFacts, error) {
	var f keyFacts
	var stage string
	err := tx.QueryRowContext(ctx, factsSQL, key).Scan(f.dest(&stage)...)
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	f.Stage = State(stage)
	return f, err
}

// committed is what one event says of the fact row it commits.
type committed struct{ table, row, sha string }

// keyRowsCommitted fails closed when an event of key commits a fact row
// that is gone, or that no longer hashes as the event says. Guard grants
// from the rows, not the events: a used permit (or a rejection, a
// reconciliation, a deny evaluation) deleted from the file with its events
// left in place would otherwise read as a key with that step not taken,
// and the chain, and so every witnessed head, stays whole. It reads the
// key's events (one indexed query) and each table they name once, and
// runs only where a permit or a request could follow.
func keyRowsCommitted(ctx context.Context, tx *Tx, key string) error {
	evs, err := queryRows(ctx, tx, "SELECT fact_table, fact_row, fact_sha256 FROM events WHERE action_key = ? AND fact_table <> ''",
		[]any{key}, func(r *sql.Rows, c *committed) error { return r.Scan(&c.table, &c.row, &c.sha) })
	if err != nil {
		return err
	}
	// Every intent gets its projection row in the statement that inserts
	// it (the intents trigger, the seed fixture's inserts included), and
	// only archive removes one, with the key's events, leaving a stub. An
	// intent with no events and no projection row is an archived key
	// whose stub was deleted: it would read as freshly recorded and be
	// granted again. The absence only refuses, never grants, so the
	// projection stays a cache (SPEC 3); a key with a stub reads as
	// settled and never comes here.
	if len(evs) == 0 {
		var indexed bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM action_index WHERE action_key = ?)", key).Scan(&indexed); err != nil {
			return err
		}
		if !indexed {
			return integrityError("key %s has an intent but no events, projection row or archive stub: an archived key whose stub was removed; verify names it", key)
		}
	}
	// The rows each table holds for key, by row id, hashed.
	held := map[string]map[string]string{}
	for _, e := range evs {
		t := factTableNamed(e.table)
		if t == nil {
			return integrityError("an event of key %s commits a row of %q, which is not a fact table", key, e.table)
		}
		rows, ok := held[t.name]
		if !ok || t.keyCol == "" {
			if rows == nil {
				rows = map[string]string{}
			}
			q, arg := "SELECT "+t.cols+" FROM "+t.name+" WHERE "+t.keyCol+" = ?", any(key)
			if t.keyCol == "" {
				q, arg = "SELECT "+t.cols+" FROM "+t.name+" WHERE CAST("+t.id+" AS TEXT) = ?", e.row
			}
			refs, err := queryRows(ctx, tx, q, []any{arg}, func(r *sql.Rows, ref *factRef) error {
				vals, err := scanFact(r, t.ncols())
				*ref = t.ref(vals)
				return err
			})
			if err != nil {
				return err
			}
			for _, ref := range refs {
				rows[ref.Row] = ref.SHA256
			}
			held[t.name] = rows
		}
		switch sha, ok := rows[e.row]; {
		case !ok:
			return integrityError("the chain commits row %s of %s for key %s, and the row is gone", e.row, e.table, key)
		case sha != e.sha:
			return integrityError("row %s of %s for key %s no longer hashes as the event that commits it says", e.row, e.table, key)
		}
	}
	return nil
}
