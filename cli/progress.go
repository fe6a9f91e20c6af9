package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/tollgate-dev/tollgate/ledger"
)

// progress shows a long verify's step on the operator's terminal: nothing
// for the first `after`, then one line rewritten in place at each tick,
// cleared when the run ends. Output that is not a terminal (a pipe, a
// file, --json consumers) gets nothing, so answers stay one object.
type progress struct {
	w     io.Writer
	start time.Time
	after time.Duration
	mu    sync.Mutex
	n     int
	name  string
	shown bool
	stop  chan struct{}
	done  chan struct{}
}

// startProgress begins ticking every `every` on w.
func startProgress(w io.Writer, after, every time.Duration) *progress {
	p := &progress{w: w, start: time.Now(), after: after, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case now := <-t.C:
				p.draw(now)
			}
		}
	}()
	return p
}

// step records the step verify has begun (ledger.Store.VerifyWith).
func (p *progress) step(n int, name string) {
	p.mu.Lock()
	p.n, p.name = n, name
	p.mu.Unlock()
}

func (p *progress) draw(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := now.Sub(p.start)
	if elapsed < p.after || p.n == 0 {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\x1b[Kverify: step %d of %d, %s · %ds", p.n, ledger.VerifyStepCount, p.name, int(elapsed.Seconds()))
}

// finish stops the ticks and clears the line if one was drawn.
func (p *progress) finish() {
	close(p.stop)
	<-p.done
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
