package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Outcome is what a permit holder reports.
type Outcome string

// The three outcomes a permit holder can report.
const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	Unknown   Outcome = "unknown"
)

// ParseOutcome checks an outcome name.
func ParseOutcome(s string) (Outcome, error) {
	switch Outcome(s) {
	case Succeeded, Failed, Unknown:
		return Outcome(s), nil
	}
	return "", fmt.Errorf("%w: outcome %q: use succeeded, failed or unknown", ErrInvalidInput, s)
}

// Report refusals.
var (
	// ErrNoPermit means the key has no permit, so nothing can be reported.
	ErrNoPermit = errors.New("no permit was issued for this key")
	// ErrWrongPermit means the permit id is not the key's permit.
	ErrWrongPermit = errors.New("permit id does not match the key's permit")
	// ErrReportDiffers means a different final report is already stored.
	ErrReportDiffers = errors.New("a different outcome was already reported")
	// ErrNotUncertain means only an uncertain action can be reconciled.
	ErrNotUncertain = errors.New("only an uncertain action can be reconciled")
)

// ReportOptions carries the optional parts of a report.
type ReportOptions struct {
	// Ref is a safe reference to the external effect (a provider id), never
	// the payload.
	Ref     string
	Latency time.Duration
	// Result is what the action returned (an MCP tool's result, say),
	// at most MaxResultLen bytes of valid UTF-8, kept with the report so
	// that a caller that lost the first answer can be given it again
	// (mcpgate's proxy replays it). Empty keeps none; a redacted action's
	// caller passes none.
	Result string
}

// MaxResultLen bounds a stored result.
const MaxResultLen = 64 << 10

// ReportAnswer is the result of Report.
type ReportAnswer struct {
	Key     string  `json:"key"`
	State   State   `json:"state"`
	Outcome Outcome `json:"outcome"`
	// Replayed is true when this exact report was already stored.
	Replayed bool `json:"replayed"`
	// Late is true when the report came after the lease ran out or after
	// reconciliation: it is kept as evidence and does not settle the key.
	Late bool `json:"late"`
	// Disagrees is true when a late report contradicts the reconciliation;
	// the key is flagged for review.
	Disagrees  bool `json:"disagrees_with_reconciliation"`
	SafeNewKey bool `json:"safe_new_key"`
}

// Report records the permit holder's outcome. Only the key's permit may
// report; the same report again is a no-op; a different final report is
// refused and logged; a report after the lease or after reconciliation is
// kept as evidence.
func (s *Store) Report(ctx context.Context, key, permitID string, outcome Outcome, opt ReportOptions) (ReportAnswer, error) {
	if err := CheckReportInput(key, outcome, opt); err != nil {
		return ReportAnswer{}, err
	}
	if sr, ok := s.serverReport(); ok {
		if a, done, err := s.reportOnServer(ctx, sr, key, permitID, outcome, opt); err != nil || done {
			return a, err
		}
	}
	r, err := writeKeyed(ctx, s, logicalOf(key), func(tx *Tx) (refused[ReportAnswer], error) {
		return reportTx(ctx, tx, key, permitID, outcome, opt)
	})
	if err != nil {
		return ReportAnswer{}, err
	}
	return r.val, r.err
}

// reportTx files one report inside tx. A refusal (no permit, another
// permit's id, a different final report) is returned beside a nil error:
// it was logged, and the caller commits the log before reporting it.
func reportTx(ctx context.Context, tx *Tx, key, permitID string, outcome Outcome, opt ReportOptions) (refused[ReportAnswer], error) {
	ans := ReportAnswer{Key: key, Outcome: outcome}
	var why error
	now := tx.now
	var holder string
	var lease int64
	var accepted Outcome
	var f keyFacts
	var err error
	read := tx.onServer()
	if read {
		// One round trip for the three reads below (the permit, the
		// accepted report, the key's facts): a key with a permit has an
		// intent, so no row still means no permit.
		var stage string
		var acc sql.NullString
		err = tx.QueryRowContext(ctx, reportReadSQL, key, key).Scan(append([]any{&holder, &lease, &acc}, f.dest(&stage)...)...)
		accepted, f.Stage = Outcome(acc.String), State(stage)
	} else {
		err = tx.QueryRowContext(ctx, "SELECT permit_id, lease_ms FROM permits WHERE action_key = ?", key).Scan(&holder, &lease)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		why = fmt.Errorf("key %s: %w", key, ErrNoPermit)
	case err != nil:
		return refused[ReportAnswer]{val: ans}, err
	case holder != permitID:
		why = fmt.Errorf("key %s: %w", key, ErrWrongPermit)
	}
	if why != nil {
		// Kept as evidence: who tried to report what, under which id.
		return refused[ReportAnswer]{ans, why}, refuseReport(ctx, tx, key, permitID, outcome, opt, why, now)
	}
	if !read {
		if err := tx.QueryRowContext(ctx, "SELECT outcome FROM reports WHERE action_key = ? AND kind = 'accepted'", key).Scan(&accepted); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return refused[ReportAnswer]{val: ans}, err
		}
		if f, err = loadFacts(ctx, tx, key); err != nil {
			return refused[ReportAnswer]{val: ans}, err
		}
	}
	kind := "accepted"
	switch {
	case accepted == outcome:
		ans.Replayed = true
	case accepted != "":
		kind, why = "refused", fmt.Errorf("key %s: %w (stored %s, this report %s)", key, ErrReportDiffers, accepted, outcome)
	case f.Result != "" || now >= lease:
		kind, ans.Late = "late", true
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM reports WHERE action_key = ? AND kind = 'late' AND outcome = ?", key, outcome).Scan(&n); err != nil {
			return refused[ReportAnswer]{val: ans}, err
		}
		ans.Replayed = n > 0
	}
	if !ans.Replayed {
		ref, err := insertFact(ctx, tx, "reports", "action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result",
			key, permitID, string(outcome), opt.Ref, opt.Latency.Milliseconds(), kind, now, opt.Result)
		if err != nil {
			return refused[ReportAnswer]{val: ans}, err
		}
		if err := appendEvent(ctx, tx, key, "report_"+kind, permitID, map[string]any{
			"outcome": outcome, "ref": opt.Ref, "latency_ms": opt.Latency.Milliseconds()}, now, &ref); err != nil {
			return refused[ReportAnswer]{val: ans}, err
		}
		if kind == "accepted" {
			f.Stage, f.Deadline = outcomeStage(outcome), 0
			if err := setStage(ctx, tx, key, f.Stage, 0, now); err != nil {
				return refused[ReportAnswer]{val: ans}, err
			}
		}
	}
	ans.Disagrees = disagrees(outcome, f.Result)
	if ans.Disagrees && !ans.Replayed {
		if err := appendEvent(ctx, tx, key, evDisagreement, permitID, map[string]any{"reported": outcome, "reconciled": f.Result}, now, nil); err != nil {
			return refused[ReportAnswer]{val: ans}, err
		}
	}
	ans.State = stateFrom(f.Stage, f.Deadline, now)
	ans.SafeNewKey = safeNewKey(ans.State, f.Result)
	return refused[ReportAnswer]{ans, why}, nil
}

// reportReadSQL is, on PostgreSQL, a report's reads in one statement:
// the key's permit, its accepted report's outcome (NULL: none) and
// factsSQL's columns; no row when the key has no permit.
const reportReadSQL = "SELECT pm.permit_id, pm.lease_ms, (SELECT outcome FROM reports WHERE action_key = pm.action_key AND kind = 'accepted'), f.*" +
	" FROM (" + factsSQL + ") f JOIN permits pm ON pm.action_key = ?"

// outcomeStage is the stage an accepted report moves its key to.
func outcomeStage(o Outcome) State {
	if o == Unknown {
		return StateUncertain
	}
	return State(o)
}

// refuseReport keeps a report that could not be filed under the key's
// permit (none, or another id) as evidence, with the rule that refused it.
func refuseReport(ctx context.Context, tx *Tx, key, permitID string, outcome Outcome, opt ReportOptions, rule error, now int64) error {
	ref, err := insertFact(ctx, tx, "report_refusals", "action_key, permit_id, outcome, ref, latency_ms, rule, at_ms",
		key, permitID, string(outcome), opt.Ref, opt.Latency.Milliseconds(), rule.Error(), now)
	if err != nil {
		return err
	}
	return appendEvent(ctx, tx, key, evReportRefused, permitID, map[string]any{"outcome": outcome, "rule": rule.Error()}, now, &ref)
}

// Reconciliation is an operator's settlement of an uncertain action.
type Reconciliation struct {
	Key      string    `json:"key"`
	Result   Result    `json:"result"`
	Operator string    `json:"operator"`
	Note     string    `json:"note"`
	At       time.Time `json:"at"`
	// Disagrees is true when a late report already on file contradicts
	// this result: the key is flagged for review.
	Disagrees  bool `json:"disagrees_with_report"`
	SafeNewKey bool `json:"safe_new_key"`
	// Proof is how the reconciliation is signed.
	Proof Proof `json:"proof"`
}

// CheckReconcileInput applies the rules a reconciliation's input must
// meet before any ledger is opened.
func CheckReconcileInput(key string, result Result, operator, note string) error {
	if _, err := ParseKey(key); err != nil {
		return err
	}
	if _, err := ParseResult(string(result)); err != nil {
		return err
	}
	if err := checkOperator(operator); err != nil {
		return err
	}
	if note == "" {
		return fmt.Errorf("%w: a reconciliation needs a note", ErrInvalidInput)
	}
	return checkText("note", note)
}

// Reconcile settles an uncertain action as executed or not-executed, once,
// with an operator and a note. Nothing is re-executed.
func (s *Store) Reconcile(ctx context.Context, key string, result Result, operator, note string) (Reconciliation, error) {
	if err := CheckReconcileInput(key, result, operator, note); err != nil {
		return Reconciliation{}, err
	}
	var rec Reconciliation
	proof, err := s.signedWrite(ctx, operator, statement{Fact: "reconciliations", Key: key, Act: string(result), Text: note}, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		rec = Reconciliation{Key: key, Result: result, Operator: op, Note: note, SafeNewKey: safeNewKey(StateReconciled, result), At: fromMS(now)}
		f, err := loadFacts(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		if st := stateFrom(f.Stage, f.Deadline, now); st != StateUncertain {
			return nil, fmt.Errorf("key %s is %s: %w", key, st, ErrNotUncertain)
		}
		ref, err := insertFact(ctx, tx, "reconciliations", "action_key, result, operator, note, at_ms", key, string(result), op, note, now)
		if err != nil {
			return nil, err
		}
		if err := appendEvent(ctx, tx, key, evReconciled, op, map[string]any{"result": result, "note": note}, now, &ref); err != nil {
			return nil, err
		}
		outcomes, err := queryRows(ctx, tx, "SELECT outcome FROM reports WHERE action_key = ? AND kind != 'refused'", []any{key},
			func(rows *sql.Rows, o *Outcome) error { return rows.Scan(o) })
		if err != nil {
			return nil, err
		}
		for _, o := range outcomes {
			rec.Disagrees = rec.Disagrees || disagrees(o, result)
		}
		if rec.Disagrees {
			if err := appendEvent(ctx, tx, key, evDisagreement, op, map[string]any{"reconciled": result}, now, nil); err != nil {
				return nil, err
			}
		}
		return &ref, setStage(ctx, tx, key, StateReconciled, 0, now)
	})
	rec.Proof = proof
	return rec, err
}

// ReviewConflict marks a logged conflict as reviewed by an operator.
func (s *Store) ReviewConflict(ctx context.Context, conflictID int64, operator, note string) error {
	return s.review(ctx, "conflicts", "conflict_reviews", "conflict_id", evConflictReviewed, conflictID, operator, note)
}

// ReviewFenced marks a logged fenced call as reviewed by an operator.
func (s *Store) ReviewFenced(ctx context.Context, fencedID int64, operator, note string) error {
	return s.review(ctx, "fenced", "fenced_reviews", "fenced_id", evFencedReviewed, fencedID, operator, note)
}

// ErrAlreadyReviewed means the item already carries a review.
var ErrAlreadyReviewed = errors.New("already reviewed")

func (s *Store) review(ctx context.Context, table, reviews, col, event string, id int64, operator, note string) error {
	if err := CheckReviewInput(operator, note); err != nil {
		return err
	}
	_, err := s.signedWrite(ctx, operator, statement{Fact: reviews, ref: strconv.FormatInt(id, 10), Act: "reviewed", Text: note}, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		var key string
		var done int
		err := tx.QueryRowContext(ctx, "SELECT t.action_key, (SELECT count(*) FROM "+reviews+" r WHERE r."+col+" = t.id) FROM "+table+" t WHERE t.id = ?", id).Scan(&key, &done)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: no %s row %d", ErrNotFound, table, id)
		}
		if err != nil {
			return nil, err
		}
		if done > 0 {
			return nil, fmt.Errorf("%s %d: %w", table, id, ErrAlreadyReviewed)
		}
		ref, err := insertFact(ctx, tx, reviews, col+", operator, note, at_ms", id, op, note, now)
		if err != nil {
			return nil, err
		}
		return &ref, appendEvent(ctx, tx, key, event, op, map[string]any{col: id, "note": note}, now, &ref)
	})
	return err
}
