package ledger

import (
	"context"
	"database/sql"
	"time"
)

// VoteNews is one vote an event commits, for a console to announce the
// votes other operators cast (issue 42).
type VoteNews struct {
	ID       int64
	Key      string
	Operator string
	Decision DecisionKind
	At       time.Time
}

// VotesAfter returns up to limit votes with an id above after, oldest
// first, and the newest vote id in the ledger. A vote no event commits
// (inserted by hand) is not news. With after below zero it returns only
// the newest id: where a console starts listening.
func (s *Store) VotesAfter(ctx context.Context, after int64, limit int) ([]VoteNews, int64, error) {
	var out []VoteNews
	var newest int64
	err := s.read(ctx, func(tx *Tx) error {
		out = nil
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM votes").Scan(&newest); err != nil {
			return err
		}
		if after < 0 || newest <= after {
			return nil
		}
		var err error
		out, err = queryRows(ctx, tx, "SELECT v.id, v.action_key, v.operator, v.decision, v.at_ms FROM votes v WHERE v.id > ?"+
			" AND EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'votes' AND ev.fact_row = CAST(v.id AS TEXT)) ORDER BY v.id LIMIT ?",
			[]any{after, limit}, func(r *sql.Rows, v *VoteNews) error {
				var at int64
				err := r.Scan(&v.ID, &v.Key, &v.Operator, &v.Decision, &at)
				v.At = fromMS(at)
				return err
			})
		return err
	})
	return out, newest, err
}
