package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

type watchFlags struct {
	warn     time.Duration
	exec     string
	interval time.Duration
}

func bindWatch(fs *flag.FlagSet, f *watchFlags) {
	fs.DurationVar(&f.warn, "warn", 10*time.Minute, "say when a pending approval is this close to expiring")
	fs.StringVar(&f.exec, "exec", "", "run this command (with sh -c) once per event, the event's JSON on its stdin; nothing from the ledger is put in the command line")
	fs.DurationVar(&f.interval, "interval", 500*time.Millisecond, "how often to look for changes")
}

// watchEvent is one line of watch's output: something an operator should
// know about now.
type watchEvent struct {
	Event    string    `json:"event"` // pending, expiring, uncertain, conflict, fenced
	Key      string    `json:"key"`
	Kind     string    `json:"kind,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	ID       int64     `json:"id,omitempty"` // conflict or fenced call id
	Deadline time.Time `json:"deadline,omitzero"`
	Detail   string    `json:"detail,omitempty"`
	At       time.Time `json:"at"`
}

// watcher remembers what it already said, so each event is said once.
type watcher struct {
	s    Ledger
	warn time.Duration
	seen map[string]bool
}

// poll reads the open items and returns the events not said before. The
// first poll says every item open at start.
func (w *watcher) poll(ctx context.Context) ([]watchEvent, error) {
	now := w.s.Now()
	var out []watchEvent
	// Each event carries its own time (when the key became pending, the
	// conflict was logged, the lease ran out), not when watch saw it: a
	// hook that runs late still passes when it happened.
	add := func(id string, e watchEvent) {
		if !w.seen[id] {
			w.seen[id] = true
			if e.At.IsZero() {
				e.At = now
			}
			out = append(out, e)
		}
	}
	pending, err := w.s.List(ctx, ledger.Filter{State: ledger.StatePending, Limit: 10000})
	if err != nil {
		return nil, err
	}
	for _, r := range pending {
		add("pending "+r.Key, watchEvent{Event: "pending", Key: r.Key, Kind: r.Kind, Agent: r.Agent, Deadline: r.Deadline, At: r.Updated})
		if !r.Deadline.IsZero() && r.Deadline.Sub(now) <= w.warn {
			add("expiring "+r.Key, watchEvent{Event: "expiring", Key: r.Key, Kind: r.Kind, Agent: r.Agent, Deadline: r.Deadline,
				Detail: fmt.Sprintf("the approval expires in %s", r.Deadline.Sub(now).Round(time.Second))})
		}
	}
	uncertain, err := w.s.List(ctx, ledger.Filter{State: ledger.StateUncertain, Limit: 10000})
	if err != nil {
		return nil, err
	}
	for _, r := range uncertain {
		at := r.Updated // reported unknown then
		if !r.Deadline.IsZero() && !r.Deadline.After(now) {
			at = r.Deadline // the lease ran out then
		}
		add("uncertain "+r.Key, watchEvent{Event: "uncertain", Key: r.Key, Kind: r.Kind, Agent: r.Agent, At: at,
			Detail: "permit issued with no confirmed outcome: reconcile, do not re-execute"})
	}
	conflicts, err := w.s.Conflicts(ctx, false, "", 0, 10000)
	if err != nil {
		return nil, err
	}
	for _, c := range conflicts {
		add(fmt.Sprint("conflict ", c.ID), watchEvent{Event: "conflict", Key: c.Key, Agent: c.Agent, ID: c.ID, At: c.At, Detail: "differs in " + c.Differs})
	}
	fenced, err := w.s.Fenced(ctx, false, "", 0, 10000)
	if err != nil {
		return nil, err
	}
	for _, f := range fenced {
		add(fmt.Sprint("fenced ", f.ID), watchEvent{Event: "fenced", Key: f.Key, Agent: f.Agent, ID: f.ID, At: f.At, Detail: f.Reason})
	}
	return out, nil
}

// runWatch follows the ledger until interrupted. It re-reads as soon as
// another process commits (the engine's watch: PRAGMA data_version on
// SQLite, LISTEN/NOTIFY on PostgreSQL, asked every 25 ms) and when time
// alone may have changed something (every interval: approvals near
// expiry, lapsed leases). Hooks run beside it (hookLimit at a time, in
// order for one key), so a slow hook delays no alert. A busy ledger is
// waited out; SIGINT ends it with exit 0.
func runWatch(ctx context.Context, c *cmdCtx, f *watchFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if f.warn < 0 || f.interval < 50*time.Millisecond || f.interval > time.Hour {
		return 0, fmt.Errorf("%w: --warn is at least 0 and --interval between 50ms and 1h", ledger.ErrInvalidInput)
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	w := &watcher{s: s, warn: f.warn, seen: map[string]bool{}}
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	var changed ledger.Watch
	var wake <-chan time.Time
	if ws, ok := s.(interface {
		Watch(context.Context) (ledger.Watch, error)
	}); ok {
		if changed, err = ws.Watch(ctx); err == nil {
			defer changed.Close()
			fast := time.NewTicker(25 * time.Millisecond)
			defer fast.Stop()
			wake = fast.C
		}
	}
	hooks := newHooks(ctx, f.exec, c.env.Stderr)
	defer hooks.wait()
	for {
		events, err := w.poll(ctx)
		switch {
		case ctx.Err() != nil:
			return ExitOK, nil
		case errors.Is(err, ledger.ErrBusy):
			// Another process holds the ledger: try again on the next tick.
		case err != nil:
			return 0, err
		}
		for _, e := range events {
			c.printEvent(e)
			hooks.run(e)
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return ExitOK, nil
			case <-tick.C:
				break wait
			case <-wake:
				if ok, err := changed.Changed(ctx); err != nil || ok {
					break wait // an error: the poll says what it is
				}
			}
		}
	}
}

// hookLimit is how many --exec hooks may run at once.
const hookLimit = 4

// hooks runs --exec for each event: at most hookLimit at once, one key's
// in the order watch said them.
type hooks struct {
	ctx     context.Context
	command string
	stderr  io.Writer
	slots   chan struct{}
	mu      sync.Mutex
	last    map[string]chan struct{} // each key's newest hook, done when closed
	wg      sync.WaitGroup
}

func newHooks(ctx context.Context, command string, stderr io.Writer) *hooks {
	return &hooks{ctx: ctx, command: command, stderr: &lockedWriter{w: stderr}, slots: make(chan struct{}, hookLimit), last: map[string]chan struct{}{}}
}

// lockedWriter lets hooks running at once share one stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// run starts e's hook after the key's previous one ends.
func (h *hooks) run(e watchEvent) {
	if h.command == "" {
		return
	}
	h.mu.Lock()
	prev, done := h.last[e.Key], make(chan struct{})
	h.last[e.Key] = done
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		h.slots <- struct{}{}
		defer func() { <-h.slots }()
		if err := runHook(h.ctx, h.command, e, h.stderr); err != nil {
			fmt.Fprintf(h.stderr, "tollgate watch: --exec for %s %s: %s\n", e.Event, safetext.Escape(e.Key), safetext.Escape(err.Error()))
		}
		h.mu.Lock()
		if h.last[e.Key] == done {
			delete(h.last, e.Key)
		}
		h.mu.Unlock()
	}()
}

// wait lets the running hooks end (SIGINT has cancelled them).
func (h *hooks) wait() { h.wg.Wait() }

func (c *cmdCtx) printEvent(e watchEvent) {
	if c.json {
		writeJSON(c.stdout, e)
		return
	}
	line := fmt.Sprintf("%s %-9s %s", e.At.UTC().Format("2006-01-02 15:04:05Z"), e.Event, safetext.Escape(e.Key))
	if e.Kind != "" {
		line += " kind " + safetext.Escape(e.Kind)
	}
	if e.Agent != "" {
		line += " agent " + safetext.Escape(e.Agent)
	}
	if !e.Deadline.IsZero() {
		line += " deadline " + e.Deadline.UTC().Format("2006-01-02 15:04:05Z")
	}
	if e.Detail != "" {
		line += ": " + safetext.Escape(e.Detail)
	}
	fmt.Fprintln(c.stdout, line)
}

// runHook runs the operator's command with the event as JSON on stdin.
// The command line is the operator's own text; nothing an agent wrote
// (keys, kinds, agent names, reasons) ever reaches the shell but as data
// on stdin, escaped as every JSON answer is.
func runHook(ctx context.Context, command string, e watchEvent, stderr io.Writer) error {
	var in bytes.Buffer
	writeJSON(&in, e)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, stderr, stderr
	cmd.Env = append(os.Environ(), "TOLLGATE_EVENT="+e.Event)
	return cmd.Run()
}
