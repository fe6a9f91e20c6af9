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

// progress shows how far a long verify or export is on the operator's terminal: nothing
// for the first `after`, then one line rewritten in place at each tick,
// cleared when the run ends. Output that is not a terminal (a pipe, a
// file, --json consumers) gets nothing, so answers stay one object.
type progress struct {
	w     io.Writer
	start time.Time
	after time.Duration
	mu    sync.Mutex
	what  string // the line, without the elapsed time
	shown bool
	stop  chan struct{}
	done  chan struct{}
}

// progress is the line a long verify or export shows: on the operator's
// terminal only, after two quiet seconds. Where stderr is no terminal it
// is nil, and a nil progress records and draws nothing.
func (c *cmdCtx) progress() *progress {
	if !isTerminal(c.env.Stderr) {
		return nil
	}
	return startProgress(c.env.Stderr, 2*time.Second, 250*time.Millisecond)
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
	p.set(fmt.Sprintf("verify: step %d of %d, %s", n, ledger.VerifyStepCount, name))
}

// exported records how many actions export has written
// (ledger.Store.ExportWith).
func (p *progress) exported(n int) {
	p.set(fmt.Sprintf("export: %d actions written", n))
}

func (p *progress) set(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.what = what
	p.mu.Unlock()
}

func (p *progress) draw(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := now.Sub(p.start)
	if elapsed < p.after || p.what == "" {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\x1b[K%s · %ds", p.what, int(elapsed.Seconds()))
}

// finish stops the ticks and clears the line if one was drawn.
func (p *progress) finish() {
	if p == nil {
		return
	}
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
