package ledger

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Group commit: where one process serves many callers (the MCP gate, the
// console's batch decisions, an agent runtime calling from many
// goroutines), writes that arrive while another commits wait and then
// commit together in one transaction, one fsync for all. Each call still
// runs alone in its own savepoint, in arrival order, and gets its own
// answer: a call that fails rolls back to its savepoint and leaves the
// others' writes as they were, exactly as if each had had a transaction
// of its own, one after another.
//
// There is no goroutine of its own: the first caller to find no batch
// running leads one, taking every call waiting (up to maxGroup), and on
// finishing hands the lead to the first call that arrived meanwhile.

// maxGroup bounds a batch: a transaction that holds the write lock for
// 64 guards still ends in a few milliseconds.
const maxGroup = 64

// group is the queue of calls waiting to commit.
type group struct {
	mu    sync.Mutex
	queue []*groupCall
	busy  bool // a leader is running a batch
	// observe, when set, is told each batch's size once it has committed
	// (ObserveBatches).
	observe atomic.Pointer[func(size int)]
}

// ObserveBatches has f told, after each group commit, how many calls it
// held (one for a call that found no other waiting), so that a server can
// show whether concurrent callers share their commits. f runs on the
// batch leader's goroutine after every call of the batch has its answer,
// and must not block; nil stops the reports. A store opened without
// Options.GroupCommit forms no batches and never calls f.
func (s *Store) ObserveBatches(f func(size int)) {
	if f == nil {
		s.group.observe.Store(nil)
		return
	}
	s.group.observe.Store(&f)
}

type groupCall struct {
	ctx  context.Context
	fn   func(*Tx) error
	err  error
	done chan struct{}
	lead chan struct{} // the call is to lead the next batch
}

// handoff passes the lead to the first waiting call, or marks the group
// idle; mu is held.
func (g *group) handoff() {
	if len(g.queue) == 0 {
		g.busy = false
		return
	}
	g.queue[0].lead <- struct{}{}
}

// writeGrouped is write through the group: the call waits for the batch
// running now, if any, then commits in the next one.
func (s *Store) writeGrouped(ctx context.Context, fn func(*Tx) error) error {
	g := &s.group
	c := &groupCall{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if !g.busy {
		g.busy = true
		c.lead <- struct{}{}
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-c.lead:
		s.lead()
		return c.err
	case <-ctx.Done():
	}
	// The caller gave up. Still waiting: leave the queue (passing on the
	// lead if it was just handed over). Already in a batch: the batch
	// decides, and its answer is the call's.
	g.mu.Lock()
	if i := slices.Index(g.queue, c); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
		select {
		case <-c.lead:
			g.handoff()
		default:
		}
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
	case <-c.lead:
		s.lead()
	}
	return c.err
}

// lead takes the waiting calls (the leader's own is first among them),
// commits them as one batch, answers each and passes the lead on.
func (s *Store) lead() {
	g := &s.group
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()
	s.commitBatch(batch)
	for _, c := range batch {
		close(c.done)
	}
	g.mu.Lock()
	g.handoff()
	g.mu.Unlock()
	// Told after the lead has passed on: the next batch need not wait
	// for the observer.
	if f := g.observe.Load(); f != nil {
		(*f)(len(batch))
	}
}

// commitBatch runs the calls in one transaction. A call alone runs as an
// ungrouped write does, under its own context. Several run under one
// context that ends only when every caller's has (a caller that gives up
// must not interrupt the others' statements), each in a savepoint; a
// failure the engine would retry (serialization, a lost connection) takes
// the whole batch round again, and any other failure of the transaction
// itself is every call's answer.
func (s *Store) commitBatch(batch []*groupCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.err = s.retry(c.ctx, s.attemptTimeout, func(ctx context.Context) error { return s.writeOnce(ctx, c.fn) })
		return
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	defer cancel()
	var left atomic.Int64
	left.Store(int64(len(batch)))
	for _, c := range batch {
		stop := context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	err := s.retry(bctx, s.attemptTimeout, func(actx context.Context) error {
		return s.writeOnce(actx, func(tx *Tx) error {
			for _, c := range batch {
				if err := s.savepointed(actx, tx, c); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		for _, c := range batch {
			c.err = err
		}
	}
}

// savepointed runs one call of a batch inside a savepoint, rolling back to
// it when the call fails (the chain head as it was, too), and sets the
// call's answer. It returns an error only when the whole batch must end:
// the savepoint itself failed, or the call's failure is one the engine
// retries with the whole transaction.
func (s *Store) savepointed(ctx context.Context, tx *Tx, c *groupCall) error {
	c.err = nil
	if err := c.ctx.Err(); err != nil {
		c.err = err // gave up before its turn: nothing of it is written
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, "SAVEPOINT tollgate_call"); err != nil {
		return err
	}
	head := tx.head
	if err := c.fn(tx); err != nil {
		if s.eng.Retryable(err) {
			return err
		}
		if _, rerr := tx.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT tollgate_call"); rerr != nil {
			return rerr
		}
		tx.head, c.err = head, err
	}
	_, err := tx.tx.ExecContext(ctx, "RELEASE SAVEPOINT tollgate_call")
	return err
}
