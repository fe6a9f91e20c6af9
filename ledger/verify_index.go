package ledger

import (
	"context"
	"database/sql"
	"sort"
)

// verifyIndexOrder proves the projection's id column, the order lists
// page through (issue 42: `UPDATE action_index SET id = ...` from a shell
// reordered what operators see, and verify said ok). On SQLite, where one
// writer at a time records, a key's id is given when its intent is
// inserted, in the same transaction as the event that records it: in id
// order, the keys tollgate recorded must have their "recorded" events in
// chain order. Keys recorded outside tollgate (the seed fixture's, with
// no such event) have no order to prove. Each row whose id breaks the
// order is named: the fewest rows that, put back, leave the rest in order
// (those outside a longest run in order). On PostgreSQL ids come from a
// sequence taken before commit, so concurrent guards may commit out of
// id order; no role but the schema's owner can write the projection there.
func verifyIndexOrder(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	if tx.onServer() {
		return nil
	}
	const q = `SELECT x.id, (SELECT min(e.seq) FROM events e WHERE e.fact_table = 'payloads' AND e.fact_row = x.action_key AND e.type = '` + evRecorded + `')
		FROM action_index x ORDER BY x.id`
	// A first pass keeps nothing: the common answer is that every seq
	// rises with the id.
	inOrder := true
	last := int64(-1)
	err := scanIDSeq(ctx, tx, q, func(_, seq int64) {
		if seq > 0 {
			inOrder = inOrder && seq > last
			last = max(last, seq)
		}
	})
	if err != nil || inOrder {
		return err
	}
	var ids, seqs []int64
	if err := scanIDSeq(ctx, tx, q, func(id, seq int64) {
		if seq > 0 {
			ids, seqs = append(ids, id), append(seqs, seq)
		}
	}); err != nil {
		return err
	}
	keep := longestRising(seqs)
	for i, id := range ids {
		if keep[i] {
			continue
		}
		var key string
		if err := tx.QueryRowContext(ctx, "SELECT action_key FROM action_index WHERE id = ?", id).Scan(&key); err != nil {
			return err
		}
		rep.add("action_index", "action_key="+key, key, "id %d is out of the order the keys were recorded in (its record is event %d): the list was reordered", id, seqs[i])
	}
	return nil
}

func scanIDSeq(ctx context.Context, tx *Tx, q string, fn func(id, seq int64)) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var seq sql.NullInt64
		if err := rows.Scan(&id, &seq); err != nil {
			return err
		}
		fn(id, seq.Int64)
	}
	return rows.Err()
}

// longestRising marks the members of one longest strictly rising
// subsequence of s (patience sorting, O(n log n)).
func longestRising(s []int64) []bool {
	tails := []int{} // tails[k]: index in s of the smallest tail of a run of k+1
	prev := make([]int, len(s))
	for i, v := range s {
		k := sort.Search(len(tails), func(j int) bool { return s[tails[j]] >= v })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	keep := make([]bool, len(s))
	if len(tails) == 0 {
		return keep
	}
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		keep[i] = true
	}
	return keep
}
