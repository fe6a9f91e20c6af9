// Package demo seeds a scratch ledger and runs simulated agents against it,
// so that a newcomer sees every console view fill and change within a
// minute. The agents use tollgate exactly as real ones would (Guard, then
// Report), each with its own ledger connection; none performs an action.
package demo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// Options configures the demo.
type Options struct {
	// DB is the ledger path; empty means a new scratch file.
	DB       string
	Operator string
	// Headless runs only the agents for this long, without a console.
	Headless time.Duration
	// Console runs the operator console on the store until it quits.
	Console func(ctx context.Context, s *ledger.Store, operator string, readOnly bool) error
	// Speed scales every agent delay; zero means 1 (tests use less).
	Speed float64
	// Log receives one line per notable agent step; nil discards.
	Log func(string)
}

// Run seeds the ledger, starts the agents and opens the console. Without
// DB it works in a new temporary folder and removes it on exit; with DB
// the ledger stays where it was asked for.
func Run(ctx context.Context, opt Options) (err error) {
	scratch := ""
	if opt.DB == "" {
		if scratch, err = os.MkdirTemp("", "tollgate-demo-"); err != nil {
			return err
		}
		opt.DB = filepath.Join(scratch, "ledger.db")
		defer func() {
			if rerr := os.RemoveAll(scratch); err == nil {
				err = rerr
			}
		}()
		// A closed terminal (SIGHUP) or a kill (SIGTERM) ends the demo
		// like a quit, so the folder above is removed: without this the
		// process would die where it stands and leave it behind.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, hangups...)
		defer stop()
	}
	if opt.Speed == 0 {
		opt.Speed = 1
	}
	if opt.Log == nil {
		opt.Log = func(string) {}
	}
	// A scratch operator key, kept in memory for this run only: the
	// newcomer's decisions in the console are signed, as in production.
	key, err := scratchKey()
	if err != nil {
		return err
	}
	// The console runs on this store: its batch decisions share commits.
	s, err := ledger.Open(ctx, opt.DB, ledger.Options{Signers: []ssh.Signer{key}, GroupCommit: true})
	if err != nil {
		return err
	}
	defer s.Close()
	epoch, err := Seed(ctx, s, opt.Operator, key)
	if err != nil {
		return err
	}
	actx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, a := range agents(epoch) {
		wg.Add(1)
		go func(a agent) {
			defer wg.Done()
			a.run(actx, opt)
		}(a)
	}
	if opt.Headless > 0 || opt.Console == nil {
		select {
		case <-ctx.Done():
		case <-time.After(opt.Headless):
		}
	} else {
		err = opt.Console(ctx, s, opt.Operator, false)
	}
	stop()
	wg.Wait()
	s.Close() // before the folder goes: no -wal or -shm is left behind
	if scratch == "" {
		fmt.Fprintf(os.Stderr, "demo ledger: %s\n", s.Path()) // a URL's password stays out
	} else {
		fmt.Fprintln(os.Stderr, "demo ledger removed (keep one with: tollgate demo --db FILE)")
	}
	return err
}

// hangups are the signals that end a demo on its scratch folder cleanly.
var hangups = []os.Signal{os.Interrupt, syscall.SIGHUP, syscall.SIGTERM}

// Seed sets the demo's policy rules and activates an epoch, returning it.
func Seed(ctx context.Context, s Ledger, operator string, key ssh.Signer) (string, error) {
	if operator == "" {
		operator = "operator"
	}
	set, err := s.Operators(ctx)
	if err != nil {
		return "", err
	}
	if !set.Signed {
		if _, err := s.AddOperator(ctx, operator, opkeys.Line(key.PublicKey())); err != nil {
			return "", err
		}
	}
	rules := []struct {
		pattern string
		mode    approvals.Mode
		ttl     time.Duration
	}{
		{"refund", approvals.Approval, 15 * time.Minute},
		{"email.*", approvals.Approval, 15 * time.Minute},
		{"report.*", approvals.Auto, 0},
		{"maintenance.*", approvals.Auto, 0},
		{"export.bulk", approvals.Deny, 0},
	}
	for _, r := range rules {
		if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: r.pattern, Mode: r.mode, TTL: r.ttl}, ""); err != nil {
			if errors.Is(err, ledger.ErrNotPermitted) {
				return "", fmt.Errorf("this ledger was signed by an earlier demo's scratch key, which is gone: run the demo on a new ledger (%w)", err)
			}
			return "", err
		}
	}
	e, err := s.Epoch(ctx)
	if err != nil {
		return "", err
	}
	if e.Epoch == "" {
		if e, err = s.ActivateEpoch(ctx, "", ""); err != nil {
			return "", err
		}
	}
	return e.Epoch, nil
}

// agent is one simulated agent: every period it starts a new action, and
// it retries its open ones under the same key until they settle.
type agent struct {
	name   string
	kind   string
	period time.Duration
	lease  time.Duration
	// behaviour: "normal", "crash" (never reports), "conflict" (retries
	// with a changed payload), "stale" (uses an epoch never activated).
	behaviour string
	epoch     string
	key       func(n int) string // the logical (destination) key
	target    func(n int) string
	body      func(n int) string
}

func agents(epoch string) []agent {
	return []agent{
		{name: "refund-agent", key: func(n int) string { return fmt.Sprintf("refund:le-%d", 4400+n) }, kind: "refund", period: 9 * time.Second, behaviour: "normal", epoch: epoch,
			target: func(n int) string { return fmt.Sprintf("ledger-entry-%d", 4400+n) },
			body:   func(n int) string { return fmt.Sprintf("refund %d.00 EUR to the card on file", 10+n*7%90) }},
		{name: "mail-agent", key: func(n int) string { return fmt.Sprintf("email:receipt-%d", 100+n) }, kind: "email.send", period: 13 * time.Second, behaviour: "normal", epoch: epoch,
			target: func(n int) string { return fmt.Sprintf("customer-%d", 100+n) },
			body: func(n int) string {
				if n%3 == 1 {
					// Hostile text: the console must show it, not obey it.
					return "Hello\x1b]0;pwned\x07\x1b[2J\nApprove? approve=NO\rapprove=YES \u202eesrever"
				}
				return fmt.Sprintf("Your refund request #%d was received.\nWe will write again within two days.", n)
			}},
		{name: "report-agent", key: func(n int) string { return fmt.Sprintf("report:daily-%d", n) }, kind: "report.daily", period: 7 * time.Second, behaviour: "normal", epoch: epoch,
			target: func(n int) string { return "finance-dashboard" },
			body:   func(n int) string { return fmt.Sprintf("daily totals, run %d", n) }},
		{name: "maint-agent", key: func(n int) string { return fmt.Sprintf("maintenance:vacuum-%d", n) }, kind: "maintenance.vacuum", period: 25 * time.Second, lease: 20 * time.Second, behaviour: "crash", epoch: epoch,
			target: func(n int) string { return "orders-db" },
			body:   func(n int) string { return fmt.Sprintf("VACUUM ANALYZE; window %d", n) }},
		{name: "publish-agent", key: func(n int) string { return fmt.Sprintf("publish:post-%d", n) }, kind: "publish", period: 20 * time.Second, behaviour: "conflict", epoch: epoch,
			target: func(n int) string { return fmt.Sprintf("blog-post-%d", n) },
			body:   func(n int) string { return fmt.Sprintf("Release notes draft %d", n) }},
		{name: "legacy-agent", key: func(n int) string { return fmt.Sprintf("refund:le-%d", 9000+n) }, kind: "refund", period: 17 * time.Second, behaviour: "stale", epoch: "00000000-0000-4000-8000-0000000000aa",
			target: func(n int) string { return fmt.Sprintf("ledger-entry-%d", 9000+n) },
			body:   func(n int) string { return "refund 5.00 EUR (delayed call from before the epoch)" }},
	}
}

type open struct {
	key     string
	n       int
	retried bool
}

func (a agent) run(ctx context.Context, opt Options) {
	s, err := ledger.Open(ctx, opt.DB, ledger.Options{})
	if err != nil {
		opt.Log(a.name + ": " + err.Error())
		return
	}
	defer s.Close()
	rng := mrand.New(mrand.NewPCG(uint64(len(a.name)), uint64(time.Now().UnixNano())))
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * opt.Speed) }
	var pending []*open
	next, n := time.Now(), 0
	for {
		if !time.Now().Before(next) {
			n++
			pending = append(pending, &open{key: "hsr1:" + a.epoch + ":" + a.key(n), n: n})
			next = time.Now().Add(scale(a.period + time.Duration(rng.IntN(2000))*time.Millisecond))
		}
		var still []*open
		for _, o := range pending {
			if !a.step(ctx, s, o, opt) {
				still = append(still, o)
			}
		}
		pending = still
		select {
		case <-ctx.Done():
			return
		case <-time.After(scale(1500 * time.Millisecond)):
		}
	}
}

// step guards one open action; it returns true when the agent is done
// with it.
func (a agent) step(ctx context.Context, s Ledger, o *open, opt Options) bool {
	p := ledger.Payload{Kind: a.kind, Target: a.target(o.n), Body: a.body(o.n)}
	lease := a.lease
	if lease > 0 {
		lease = max(time.Duration(float64(lease)*opt.Speed), time.Second)
	}
	ans, err := s.Guard(ctx, o.key, p, ledger.GuardOptions{Agent: a.name, Lease: lease})
	if err != nil {
		opt.Log(fmt.Sprintf("%s: %s: %v", a.name, o.key, err))
		var fe *ledger.FencedError
		return errors.As(err, &fe) || ctx.Err() != nil || errors.Is(err, ledger.ErrInvalidInput)
	}
	if a.behaviour == "conflict" && !o.retried {
		// A buggy retry: same key, edited body. The ledger refuses it and
		// logs the attempt for review; the original stays bound.
		o.retried = true
		edited := p
		edited.Body += " (edited)"
		_, err := s.Guard(ctx, o.key, edited, ledger.GuardOptions{Agent: a.name})
		opt.Log(fmt.Sprintf("%s: retried %s with a changed payload: %v", a.name, o.key, err))
	}
	switch ans.Verdict {
	case ledger.Permitted:
		if a.behaviour == "crash" {
			opt.Log(a.name + ": got a permit for " + o.key + " and crashed before reporting")
			return true
		}
		_, err := s.Report(ctx, o.key, ans.PermitID, ledger.Succeeded, ledger.ReportOptions{Ref: fmt.Sprintf("ext-%d", 7000+o.n), Latency: 120 * time.Millisecond})
		if err != nil {
			opt.Log(fmt.Sprintf("%s: report %s: %v", a.name, o.key, err))
		}
		return true
	case ledger.RetryLater:
		return false
	}
	return true
}

// scratchKey makes an Ed25519 operator key that lives as long as the demo.
func scratchKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}
