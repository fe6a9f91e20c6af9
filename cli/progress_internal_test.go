package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the ticking goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressAfterTwoSecondsOnly: a run shorter than the threshold
// draws nothing; a longer one draws its current step, rewritten in place,
// and clears the line at the end.
func TestProgressAfterTwoSecondsOnly(t *testing.T) {
	// Off a terminal there is no progress, and using it does nothing.
	var none *progress
	none.step(1, "the engine's integrity check")
	none.exported(1000)
	none.finish()

	var quick lockedBuffer
	p := startProgress(&quick, time.Hour, time.Millisecond)
	p.step(2, "the hash chain")
	time.Sleep(20 * time.Millisecond)
	p.finish()
	if quick.String() != "" {
		t.Fatalf("a short run drew %q", quick.String())
	}

	var slow lockedBuffer
	p = startProgress(&slow, 10*time.Millisecond, 5*time.Millisecond)
	p.step(2, "the hash chain")
	time.Sleep(60 * time.Millisecond)
	p.step(6, "the projection")
	time.Sleep(60 * time.Millisecond)
	p.exported(3000)
	time.Sleep(60 * time.Millisecond)
	p.finish()
	out := slow.String()
	for _, want := range []string{"verify: step 2 of 11, the hash chain", "verify: step 6 of 11, the projection", "export: 3000 actions written"} {
		if !strings.Contains(out, want) {
			t.Fatalf("progress %q lacks %q", out, want)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") || strings.Contains(out, "\n") {
		t.Fatalf("the line is not rewritten in place and cleared: %q", out)
	}
}
