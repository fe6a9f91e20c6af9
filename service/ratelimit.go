package service

import (
	"math"
	"sync"
	"time"
)

// limiter is a token bucket per identity: each holds up to burst tokens,
// refilled at rate per second; a request takes one.
type limiter struct {
	rate  float64
	burst float64
	now   func() time.Time
	mu    sync.Mutex
	by    map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets bounds the map: past it, buckets full again are dropped.
const maxBuckets = 10000

func newLimiter(rate float64, burst int) *limiter {
	if burst < 1 {
		burst = max(1, int(math.Ceil(rate)))
	}
	return &limiter{rate: rate, burst: float64(burst), now: time.Now, by: map[string]*bucket{}}
}

// allow takes a token from who's bucket, or says how long until one is
// there.
func (l *limiter) allow(who string) (time.Duration, bool) {
	if l.rate <= 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.by[who]
	if !ok {
		if len(l.by) >= maxBuckets {
			l.sweep(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.by[who] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
}

// sweep drops the buckets that have refilled: forgetting them changes
// nothing.
func (l *limiter) sweep(now time.Time) {
	for k, b := range l.by {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.by, k)
		}
	}
}
