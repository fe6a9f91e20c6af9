package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
}

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
	if _, err := ParseKey(key); err != nil {
		return ReportAnswer{}, err
	}
	if _, err := ParseOutcome(string(outcome)); err != nil {
		return ReportAnswer{}, err
	}
	if err := checkText("ref", opt.Ref); err != nil {
		return ReportAnswer{}, err
	}
	if opt.Latency < 0 {
		return ReportAnswer{}, fmt.Errorf("%w: latency must not be negative", ErrInvalidInput)
	}
	var ans ReportAnswer
	var refused error
	err := s.write(ctx, func(tx *Tx) error {
		refused = nil
		now := ms(s.now())
		ans = ReportAnswer{Key: key, Outcome: outcome}
		var holder string
		var lease int64
		err := tx.QueryRowContext(ctx, "SELECT permit_id, lease_ms FROM permits WHERE action_key = ?", key).Scan(&holder, &lease)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("key %s: %w", key, ErrNoPermit)
		}
		if err != nil {
			return err
		}
		if holder != permitID {
			return fmt.Errorf("key %s: %w", key, ErrWrongPermit)
		}
		var accepted string
		tx.QueryRowContext(ctx, "SELECT outcome FROM reports WHERE action_key = ? AND kind = 'accepted'", key).Scan(&accepted)
		var reconciled string
		tx.QueryRowContext(ctx, "SELECT result FROM reconciliations WHERE action_key = ?", key).Scan(&reconciled)
		kind := "accepted"
		switch {
		case accepted == string(outcome):
			ans.Replayed = true
		case accepted != "":
			kind, refused = "refused", fmt.Errorf("key %s: %w (stored %s, this report %s)", key, ErrReportDiffers, accepted, outcome)
		case reconciled != "" || now >= lease:
			kind, ans.Late = "late", true
			var n int
			tx.QueryRowContext(ctx, "SELECT count(*) FROM reports WHERE action_key = ? AND kind = 'late' AND outcome = ?", key, outcome).Scan(&n)
			ans.Replayed = n > 0
		}
		if !ans.Replayed {
			if _, err := tx.ExecContext(ctx, `INSERT INTO reports(action_key, permit_id, outcome, ref, latency_ms, kind, at_ms)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, key, permitID, outcome, opt.Ref, opt.Latency.Milliseconds(), kind, now); err != nil {
				return err
			}
			if err := appendEvent(ctx, tx, key, "report_"+kind, permitID, map[string]any{
				"outcome": outcome, "ref": opt.Ref, "latency_ms": opt.Latency.Milliseconds()}, now); err != nil {
				return err
			}
			if kind == "accepted" {
				stage := string(outcome)
				if outcome == Unknown {
					stage = "uncertain"
				}
				if err := setStage(ctx, tx, key, stage, 0, now); err != nil {
					return err
				}
			}
		}
		ans.Disagrees = disagrees(string(outcome), reconciled)
		if ans.Disagrees && !ans.Replayed {
			if err := appendEvent(ctx, tx, key, "disagreement_flagged", permitID, map[string]any{"reported": outcome, "reconciled": reconciled}, now); err != nil {
				return err
			}
		}
		ix, err := loadIndex(ctx, tx, key)
		if err != nil {
			return err
		}
		ans.State = stateFrom(ix.Stage, ix.Deadline, now)
		ans.SafeNewKey = ans.State == StateFailed || ans.State == StateReconciled && reconciled == "not-executed"
		return nil
	})
	if err != nil {
		return ReportAnswer{}, err
	}
	return ans, refused
}

// disagrees reports whether a worker's outcome contradicts an operator's
// reconciliation.
func disagrees(outcome, reconciled string) bool {
	return reconciled == "executed" && outcome == string(Failed) || reconciled == "not-executed" && outcome == string(Succeeded)
}

// Reconciliation is an operator's settlement of an uncertain action.
type Reconciliation struct {
	Key      string    `json:"key"`
	Result   string    `json:"result"`
	Operator string    `json:"operator"`
	Note     string    `json:"note"`
	At       time.Time `json:"at"`
	// Disagrees is true when a late report already on file contradicts
	// this result: the key is flagged for review.
	Disagrees  bool `json:"disagrees_with_report"`
	SafeNewKey bool `json:"safe_new_key"`
}

// Reconcile settles an uncertain action as executed or not-executed, once,
// with an operator and a note. Nothing is re-executed.
func (s *Store) Reconcile(ctx context.Context, key, result, operator, note string) (Reconciliation, error) {
	if _, err := ParseKey(key); err != nil {
		return Reconciliation{}, err
	}
	if result != "executed" && result != "not-executed" {
		return Reconciliation{}, fmt.Errorf("%w: result %q: use executed or not-executed", ErrInvalidInput, result)
	}
	if err := checkOperator(operator); err != nil {
		return Reconciliation{}, err
	}
	if note == "" {
		return Reconciliation{}, fmt.Errorf("%w: a reconciliation needs a note", ErrInvalidInput)
	}
	if err := checkText("note", note); err != nil {
		return Reconciliation{}, err
	}
	rec := Reconciliation{Key: key, Result: result, Operator: operator, Note: note, SafeNewKey: result == "not-executed"}
	err := s.write(ctx, func(tx *Tx) error {
		now := ms(s.now())
		ix, err := loadIndex(ctx, tx, key)
		if err != nil {
			return err
		}
		if st := stateFrom(ix.Stage, ix.Deadline, now); st != StateUncertain {
			return fmt.Errorf("key %s is %s: %w", key, st, ErrNotUncertain)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO reconciliations(action_key, result, operator, note, at_ms) VALUES (?, ?, ?, ?, ?)",
			key, result, operator, note, now); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, key, "reconciled", operator, map[string]any{"result": result, "note": note}, now); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM reports WHERE action_key = ? AND kind != 'refused' AND
			((? = 'executed' AND outcome = 'failed') OR (? = 'not-executed' AND outcome = 'succeeded'))`, key, result, result).Scan(&n); err != nil {
			return err
		}
		if rec.Disagrees = n > 0; rec.Disagrees {
			if err := appendEvent(ctx, tx, key, "disagreement_flagged", operator, map[string]any{"reconciled": result}, now); err != nil {
				return err
			}
		}
		rec.At = fromMS(now)
		return setStage(ctx, tx, key, "reconciled", 0, now)
	})
	return rec, err
}

// ReviewConflict marks a logged conflict as reviewed by an operator.
func (s *Store) ReviewConflict(ctx context.Context, conflictID int64, operator, note string) error {
	return s.review(ctx, "conflicts", "conflict_reviews", "conflict_id", "conflict_reviewed", conflictID, operator, note)
}

// ReviewFenced marks a logged fenced call as reviewed by an operator.
func (s *Store) ReviewFenced(ctx context.Context, fencedID int64, operator, note string) error {
	return s.review(ctx, "fenced", "fenced_reviews", "fenced_id", "fenced_reviewed", fencedID, operator, note)
}

// ErrAlreadyReviewed means the item already carries a review.
var ErrAlreadyReviewed = errors.New("already reviewed")

func (s *Store) review(ctx context.Context, table, reviews, col, event string, id int64, operator, note string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	if err := checkText("note", note); err != nil {
		return err
	}
	return s.write(ctx, func(tx *Tx) error {
		now := ms(s.now())
		var key string
		var done int
		err := tx.QueryRowContext(ctx, "SELECT t.action_key, (SELECT count(*) FROM "+reviews+" r WHERE r."+col+" = t.id) FROM "+table+" t WHERE t.id = ?", id).Scan(&key, &done)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no %s row %d", ErrNotFound, table, id)
		}
		if err != nil {
			return err
		}
		if done > 0 {
			return fmt.Errorf("%s %d: %w", table, id, ErrAlreadyReviewed)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+reviews+"("+col+", operator, note, at_ms) VALUES (?, ?, ?, ?)", id, operator, note, now); err != nil {
			return err
		}
		return appendEvent(ctx, tx, key, event, operator, map[string]any{col: id, "note": note}, now)
	})
}
