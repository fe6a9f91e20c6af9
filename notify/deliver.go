package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tollgate-dev/tollgate/safetext"
)

// Source yields what the ledger committed, in commit order.
type Source interface {
	// After returns up to limit events with Seq greater than pos, in Seq
	// order.
	After(ctx context.Context, pos int64, limit int) ([]Event, error)
}

// Cursor is the delivery position of each destination, shared by every
// server over one ledger. One server at a time holds a destination's
// lease and delivers; the others wait, so a receiver is not told the same
// event by two servers at once, and a server that dies mid-delivery hands
// over when its lease runs out (the event it was sending is sent again:
// delivery is at least once).
type Cursor interface {
	// Claim takes or renews dest's lease for holder until the given time
	// and returns the position after which events are still to deliver;
	// ok is false while another holder's lease runs.
	Claim(ctx context.Context, dest, holder string, until time.Time) (pos int64, ok bool, err error)
	// Advance records that every event up to pos was delivered to dest.
	// It returns ErrLeaseLost if holder no longer holds the lease.
	Advance(ctx context.Context, dest, holder string, pos int64) error
}

// ErrLeaseLost is returned by Cursor.Advance when another holder took the
// destination's lease: the caller stops delivering to it.
var ErrLeaseLost = errors.New("the notification lease passed to another server")

// Clock is the time the deliverer waits on; tests inject one that does not
// really wait, so backoff is tested without sleeping.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Backoff is the wait before each retry: Base doubled per failed attempt,
// at most Max, then spread by up to Jitter of itself either way so that
// servers and destinations that failed together do not retry together.
type Backoff struct {
	Base   time.Duration
	Max    time.Duration
	Jitter float64 // 0 to 1
}

// DefaultBackoff starts at half a second and settles at a minute.
var DefaultBackoff = Backoff{Base: 500 * time.Millisecond, Max: time.Minute, Jitter: 0.2}

// Delay is the wait after the attempt-th failure (1 is the first); r
// draws the jitter from [0,1).
func (b Backoff) Delay(attempt int, r func() float64) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if b.Jitter > 0 {
		d += time.Duration((2*r() - 1) * b.Jitter * float64(d))
	}
	return d
}

// Deliverer sends one destination's events, in order, each until the
// receiver accepts it with a 2xx.
type Deliverer struct {
	// Dest is where the events go.
	Dest Destination
	// LedgerID names the ledger in delivery ids.
	LedgerID string
	// Secret signs each delivery; nil sends none (refused by NewDeliverer
	// unless the operator chose so).
	Secret []byte
	// Holder names this server in the shared cursor.
	Holder string
	// Source and Cursor are the ledger's.
	Source Source
	Cursor Cursor
	// Client posts; its Timeout bounds each attempt.
	Client *http.Client
	// Clock, Backoff, Poll and Lease have defaults (NewDeliverer).
	Clock   Clock
	Backoff Backoff
	// Poll is how often the source is read when nothing wakes the
	// deliverer; Wake, when set, wakes it at once (a commit happened).
	Poll time.Duration
	Wake <-chan struct{}
	// Lease is how long a claim lasts; renewed before each attempt.
	Lease time.Duration
	// OnAttempt, when set, is told each attempt's outcome (for metrics
	// and the log); err is nil for an accepted delivery.
	OnAttempt func(e Event, attempt int, err error)

	rand func() float64
}

// NewDeliverer returns a Deliverer with the defaults filled in.
func NewDeliverer(d Destination, ledgerID, holder string, secret []byte, src Source, cur Cursor) *Deliverer {
	return &Deliverer{Dest: d, LedgerID: ledgerID, Secret: secret, Holder: holder, Source: src, Cursor: cur,
		Client: &http.Client{Timeout: 10 * time.Second}, Clock: realClock{}, Backoff: DefaultBackoff,
		Poll: time.Second, Lease: 30 * time.Second, rand: rand.Float64}
}

// batch bounds the events read at once.
const batch = 100

// Run delivers until ctx ends; it returns ctx's error. A failing receiver
// or source is retried, never given up on: an approval request must not be
// dropped because a webhook was down for an hour.
func (d *Deliverer) Run(ctx context.Context) error {
	if d.rand == nil {
		d.rand = rand.Float64
	}
	dest := d.Dest.Name()
	failures := 0
	for {
		pos, ok, err := d.Cursor.Claim(ctx, dest, d.Holder, d.Clock.Now().Add(d.Lease))
		var events []Event
		if err == nil && ok {
			events, err = d.Source.After(ctx, pos, batch)
		}
		if err == nil && ok {
			err = d.sendAll(ctx, dest, events)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := d.Poll
		switch {
		case errors.Is(err, ErrLeaseLost) || err == nil && !ok:
			failures = 0
		case err != nil:
			failures++
			wait = d.Backoff.Delay(failures, d.rand)
		default:
			failures = 0
			if len(events) == batch {
				continue // more are waiting
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.Clock.After(wait):
		case <-d.Wake:
		}
	}
}

// sendAll sends events in order, advancing the cursor after each accepted
// one, so a crash repeats at most the event being sent.
func (d *Deliverer) sendAll(ctx context.Context, dest string, events []Event) error {
	for _, e := range events {
		if err := d.sendOne(ctx, dest, e); err != nil {
			return err
		}
		if err := d.Cursor.Advance(ctx, dest, d.Holder, e.Seq); err != nil {
			return err
		}
	}
	return nil
}

// sendOne posts e until a 2xx, renewing the lease before each attempt.
func (d *Deliverer) sendOne(ctx context.Context, dest string, e Event) error {
	body, err := Encode(d.LedgerID, e, d.Dest)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if _, ok, err := d.Cursor.Claim(ctx, dest, d.Holder, d.Clock.Now().Add(d.Lease)); err != nil {
				return err
			} else if !ok {
				return ErrLeaseLost
			}
		}
		wait, err := d.post(ctx, e, body)
		if d.OnAttempt != nil {
			d.OnAttempt(e, attempt, err)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if delay := d.Backoff.Delay(attempt, d.rand); delay > wait {
			wait = delay
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.Clock.After(wait):
		}
	}
}

// post makes one attempt. A refusal's Retry-After (seconds, bounded by the
// backoff's maximum) is returned as the least wait before the next.
func (d *Deliverer) post(ctx context.Context, e Event, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Dest.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tollgate-notify")
	req.Header.Set(DeliveryHeader, DeliveryID(d.LedgerID, e.Seq))
	if d.Secret != nil {
		req.Header.Set(SignatureHeader, Sign(d.Secret, d.Clock.Now(), body))
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		// url.Error repeats the whole URL, and with it a secret in its
		// path: the log gets the destination's name and the cause only.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("notify %s: %w", d.Dest.Name(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // keep the connection for the next
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	var wait time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		wait = min(time.Duration(s)*time.Second, d.Backoff.Max)
	}
	return wait, fmt.Errorf("notify %s: event %d (key %s) answered %s", d.Dest.Name(), e.Seq, safetext.Escape(e.Key), safetext.Escape(resp.Status))
}
