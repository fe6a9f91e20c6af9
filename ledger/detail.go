package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/approvals"
)

// keyRows is everything stored about one key: the intent, its derived
// stage, every fact row that names it (as stored, in the order its table
// keeps them) and, in an export, its events. Status reads one key's; Export pages
// through every key's in key order, a few range scans per page instead
// of a dozen point queries per key. detailFrom turns either into a
// Detail, so the two cannot tell different stories.
type keyRows struct {
	key      string
	sha256   string
	stage    State
	deadline int64
	// archive is the id of the archive the key went to (0: live), with
	// the reconciliation result its stub keeps.
	archive    int64
	archResult Result
	// facts holds each key-scoped fact table's rows, by table name.
	facts map[string][]factRow
	// events are the key's events, oldest first; raw their details and
	// hash versions as stored, for Export to recompute the hashes.
	events []Event
	raw    []rawEvent
}

// rawEvent is what recomputing an event's hash needs beyond Event.
type rawEvent struct {
	detail string
	hv     int
}

// factRow is one fact row's columns as the driver returned them, in the
// order of its table's cols (the order the row hash covers).
type factRow []any

// keyTables are the fact tables whose rows belong to one action, with the
// position of their action_key column and of each named column, worked
// out once from factTables.
var keyTables = func() []keyTable {
	var out []keyTable
	for i := range factTables {
		t := &factTables[i]
		if t.keyCol == "" {
			continue
		}
		kt := keyTable{factTable: t, col: map[string]int{}}
		for j, c := range strings.Split(t.cols, ", ") {
			kt.col[c] = j
		}
		kt.key = kt.col[t.keyCol]
		out = append(out, kt)
	}
	return out
}()

type keyTable struct {
	*factTable
	key int
	col map[string]int
}

// keyTableNamed is the key-scoped fact table of that name, nil for any
// other: asked for every row Status and Export read.
func keyTableNamed(name string) *keyTable { return keyTablesByName[name] }

var keyTablesByName = func() map[string]*keyTable {
	m := make(map[string]*keyTable, len(keyTables))
	for i := range keyTables {
		m[keyTables[i].name] = &keyTables[i]
	}
	return m
}()

// str and num read a column of a fact row by name: text as stored
// (drivers return TEXT as string or []byte) and integers (NULL as 0).
func (r factRow) str(t *keyTable, col string) string {
	switch v := r[t.col[col]].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func (r factRow) num(t *keyTable, col string) int64 {
	v, _ := r[t.col[col]].(int64)
	return v
}

// one is the first row of a table that holds at most one per key.
func (k *keyRows) one(table string) (factRow, *keyTable) {
	rows := k.facts[table]
	if len(rows) == 0 {
		return nil, keyTableNamed(table)
	}
	return rows[0], keyTableNamed(table)
}

// pageSQL selects keys in order with the stage and deadline the facts
// derive (the rule written once, in stageSQL and deadlineSQL).
const pageSQL = "SELECT i.action_key, i.payload_sha256, coalesce(ak.state, " + stageSQL + "), " + deadlineSQL +
	", coalesce(ak.archive_id, 0), coalesce(ak.result, '')" + factsFrom + archivedJoin

// loadKeyRows reads, in one snapshot, the keys the intents select (where
// is a condition on i.action_key, ending the query's WHERE; at most limit
// of them, in key order) and then every fact row and event in the range
// they span: one query per table, not one per key. The events are the
// caller's to attach (scanEvents), over the range it needs.
func loadKeyRows(ctx context.Context, tx *Tx, where string, args []any, limit int) ([]*keyRows, error) {
	page, err := queryRows(ctx, tx, pageSQL+" WHERE "+where+" ORDER BY i.action_key LIMIT ?", append(args, limit),
		func(r *sql.Rows, k **keyRows) error {
			*k = &keyRows{facts: map[string][]factRow{}}
			var stage string
			err := r.Scan(&(*k).key, &(*k).sha256, &stage, &(*k).deadline, &(*k).archive, &(*k).archResult)
			(*k).stage = State(stage)
			return err
		})
	if err != nil || len(page) == 0 {
		return page, err
	}
	byKey := pageKeys(page)
	lo, hi := page[0].key, page[len(page)-1].key
	for i := range keyTables {
		t := &keyTables[i]
		if tx.onServer() && t.name == "set_aside" {
			// Always empty on PostgreSQL, where no role can forge the
			// decision it would set aside (setAsideForged): not asked.
			continue
		}
		q := "SELECT " + t.cols + " FROM " + t.name + " WHERE " + t.keyCol + " BETWEEN ? AND ? ORDER BY " + t.keyCol + ", " + t.id
		rows, err := tx.QueryContext(ctx, q, lo, hi)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			vals, err := scanFact(rows, t.ncols())
			if err != nil {
				rows.Close()
				return nil, err
			}
			// A row whose key is no intent of this page (only a hand-made
			// one) is verify's to name; the page shows its intents' rows.
			if k := byKey[factRow(vals).str(t, t.keyCol)]; k != nil {
				k.facts[t.name] = append(k.facts[t.name], vals)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return page, nil
}

func pageKeys(page []*keyRows) map[string]*keyRows {
	byKey := make(map[string]*keyRows, len(page))
	for _, k := range page {
		byKey[k.key] = k
	}
	return byKey
}

// scanEvents reads the events a condition on action_key selects, in key
// then chain order, and hands each to fn with what recomputing its hash
// needs.
func scanEvents(ctx context.Context, tx *Tx, where string, args []any, fn func(Event, rawEvent) error) error {
	rows, err := tx.QueryContext(ctx, "SELECT "+eventCols+" FROM events WHERE "+where+" ORDER BY action_key, seq", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var e Event
		d, hv, err := scanEvent(rows, &e)
		if err != nil {
			return err
		}
		if err := fn(e, rawEvent{detail: d, hv: hv}); err != nil {
			return err
		}
	}
	return rows.Err()
}

// attach adds an event to the page's key it belongs to; it reports
// whether there was one.
func attach(byKey map[string]*keyRows, e Event, r rawEvent) bool {
	k := byKey[e.ActionKey]
	if k == nil {
		return false
	}
	k.events = append(k.events, e)
	k.raw = append(k.raw, r)
	return true
}

// detailFrom is what the facts of one key say, at now: the state, the
// payload's facts, policy, request, decision, permit, reports and
// reconciliation. The payload itself is decoded only where it is shown
// (status: export never prints it); the votes' proofs are decisionProofs',
// which reads signatures.
func detailFrom(k *keyRows, now int64, d *Detail) {
	d.Key, d.Logical, d.Epoch = k.key, k.key, ""
	if pk, err := ParseKey(k.key); err == nil {
		d.Logical, d.Epoch = pk.Logical, pk.Epoch
	}
	d.SHA256 = k.sha256
	result := k.archResult
	d.Archive = k.archive
	if t := keyTableNamed("set_aside"); t != nil {
		for _, r := range k.facts["set_aside"] {
			d.Forged = append(d.Forged, fmt.Sprintf("%s row %s set aside by %s when the real vote or decision was made: no event committed it; evidence of tampering",
				r.str(t, "fact_table"), r.str(t, "row_json"), r.str(t, "operator")))
		}
	}
	if r, t := k.one("reconciliations"); r != nil {
		result = Result(r.str(t, "result"))
	}
	d.State = stateFrom(k.stage, k.deadline, now)
	if r, t := k.one("payloads"); r != nil {
		d.Retained, d.Redacted = true, r.num(t, "redacted") == 1
		d.Recorded, d.Agent, d.Kind = fromMS(r.num(t, "recorded_ms")), r.str(t, "agent"), r.str(t, "kind")
		if c := r.str(t, "context"); c != "" {
			d.Context = json.RawMessage(c)
			var marks struct {
				Fields []string `json:"caller_asserted"`
			}
			if json.Unmarshal(d.Context, &marks) == nil {
				d.CallerAsserted = marks.Fields
			}
		}
	}
	if r, t := k.one("policy_evals"); r != nil {
		d.Policy, d.PolicyPat = r.str(t, "mode"), r.str(t, "pattern")
		if ex := r.str(t, "explain"); ex != "" {
			d.Rule = &approvals.Explain{}
			_ = json.Unmarshal([]byte(ex), d.Rule) // tollgate's own JSON; verify proves the row
		} else if id := r.num(t, "rule_id"); id != 0 {
			d.Rule = &approvals.Explain{RuleID: id, Pattern: d.PolicyPat}
		}
		if d.Policy == "approval" {
			d.Approvers = int(r.num(t, "approvers"))
		}
	}
	if r, t := k.one("approval_requests"); r != nil {
		d.Requested, d.Expires = fromMS(r.num(t, "requested_ms")), fromMS(r.num(t, "expires_ms"))
	}
	if r, t := k.one("decisions"); r != nil {
		d.Decision = &Decision{Key: k.key, Decision: DecisionKind(r.str(t, "decision")), Operator: r.str(t, "operator"),
			Reason: r.str(t, "reason"), At: fromMS(r.num(t, "at_ms"))}
	}
	if r, t := k.one("permits"); r != nil {
		d.PermitID, d.Holder = r.str(t, "permit_id"), r.str(t, "agent")
		d.Issued, d.Lease = fromMS(r.num(t, "issued_ms")), fromMS(r.num(t, "lease_ms"))
	}
	d.Reports = []ReportRow{} // an empty list, not null, in JSON
	rt := keyTableNamed("reports")
	for _, r := range k.facts["reports"] {
		d.Reports = append(d.Reports, ReportRow{Outcome: Outcome(r.str(rt, "outcome")), Ref: r.str(rt, "ref"),
			Latency: r.num(rt, "latency_ms"), Kind: r.str(rt, "kind"), At: fromMS(r.num(rt, "at_ms")), Result: r.str(rt, "result")})
	}
	if r, t := k.one("reconciliations"); r != nil {
		rc := &Reconciliation{Key: k.key, Result: result, Operator: r.str(t, "operator"), Note: r.str(t, "note"), At: fromMS(r.num(t, "at_ms"))}
		for _, rep := range d.Reports {
			if rep.Kind != "refused" && disagrees(rep.Outcome, rc.Result) {
				d.Disagrees, rc.Disagrees = true, true
			}
		}
		d.Reconcile = rc
	}
	d.Votes = []Vote{}
	d.Conflicts = len(k.facts["conflicts"])
	d.SafeNewKey = safeNewKey(d.State, result)
}

// needsProofs reports whether a key has anything an operator signed: its
// votes and reconciliation are then proven against the registry.
func (k *keyRows) needsProofs() bool {
	return len(k.facts["votes"]) > 0 || len(k.facts["decisions"]) > 0 || len(k.facts["reconciliations"]) > 0
}

// status fills d from one snapshot: the rows and rules Export reads, for
// one key. Status tells the truth of the facts, never the projection's
// copy.
func status(ctx context.Context, tx *Tx, d *Detail) error {
	page, err := loadKeyRows(ctx, tx, "i.action_key = ?", []any{d.Key}, 1)
	if err != nil {
		return err
	}
	if len(page) == 0 {
		return ErrNotFound
	}
	k := page[0]
	detailFrom(k, tx.now, d)
	if d.Archive != 0 {
		if err := tx.QueryRowContext(ctx, "SELECT file FROM archives WHERE id = ?", d.Archive).Scan(&d.ArchiveFile); err != nil {
			return err
		}
	}
	if r, t := k.one("payloads"); r != nil {
		if c := r.str(t, "canonical"); c != "" {
			if p, err := DecodePayload([]byte(c)); err == nil {
				d.Payload = &p
			}
		}
	}
	if d.Events, err = timeline(ctx, tx, d.Key); err != nil {
		return err
	}
	d.dropForged(d.Events)
	if k.needsProofs() {
		if err := decisionProofs(ctx, tx, d, nil); err != nil {
			return err
		}
		d.dropForgedVotes()
	}
	return nil
}
