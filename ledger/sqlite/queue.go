package sqlite

import (
	"context"
	"fmt"
	"os"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// writerQueue orders writers before SQLite's own lock. SQLite's busy
// handler makes a waiting writer sleep and poll, so under contention the
// lock goes to whoever happens to poll just after a commit and a writer
// can starve for seconds. Writers of this engine instead take an OS lock
// on a sidecar file (LEDGER-lock) before BEGIN IMMEDIATE and release it
// after commit: the kernel wakes a waiter the moment it is released. In
// one process a channel orders the goroutines first, since an flock is
// held per open file, not per caller. Writers that do not take it (an
// older tollgate, a sqlite3 shell) still meet SQLite's lock and the busy
// retry, so nothing depends on it for correctness.
type writerQueue struct {
	turn chan struct{}
	f    *os.File // nil where the folder does not allow the sidecar
}

func newWriterQueue(path string) *writerQueue {
	q := &writerQueue{turn: make(chan struct{}, 1)}
	if !fileLocks {
		return q // in-process order only; SQLite's lock does the rest
	}
	if f, err := os.OpenFile(path+"-lock", os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		q.f = f
	}
	return q
}

// acquire waits for this writer's turn until ctx ends; release gives it
// back.
func (q *writerQueue) acquire(ctx context.Context) (release func(), err error) {
	select {
	case q.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %v", engine.ErrBusy, ctx.Err())
	}
	if q.f == nil {
		return func() { <-q.turn }, nil
	}
	fd := q.f.Fd()
	if tryLock(fd) == nil {
		return q.unlocker(fd), nil
	}
	done := make(chan error, 1)
	go func() { done <- lock(fd) }()
	select {
	case err := <-done:
		if err != nil {
			<-q.turn
			return nil, err
		}
		return q.unlocker(fd), nil
	case <-ctx.Done():
		// The lock may still arrive: give it back when it does.
		go func() {
			if <-done == nil {
				unlock(fd)
			}
			<-q.turn
		}()
		return nil, fmt.Errorf("%w: %v", engine.ErrBusy, ctx.Err())
	}
}

func (q *writerQueue) unlocker(fd uintptr) func() {
	return func() {
		unlock(fd)
		<-q.turn
	}
}

func (q *writerQueue) close() {
	if q.f != nil {
		q.f.Close()
	}
}
