package mcpgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// DefaultRepeatWindow is how long a key the proxy derives from a call's
// arguments lasts unless ProxyOptions.RepeatWindow says otherwise: as
// long as Stripe keeps its idempotency keys.
const DefaultRepeatWindow = 24 * time.Hour

// PredecessorField is the context field (SPEC 10) of a call that repeats
// an ended action after the repeat window: the key it follows. Policy
// can read it (context.predecessor), and status shows it.
const PredecessorField = "predecessor"

// chainKey is the nth key of the chain of identical calls to tool with
// body (the canonical arguments) under epoch. The first is the derived
// key, mcp:<tool>:<digest>: the tool's name in key characters, then 32
// hex digits of the SHA-256 of the tool's exact name and the body,
// epoch-qualified under an active operator epoch, as new work must be.
// The nth after it has -r<n> appended to the digest, the tool's segment
// shortened where the logical key would exceed ledger.MaxKeyLen.
func chainKey(epoch, tool, body string, n int) string {
	sum := sha256.Sum256([]byte(tool + "\x00" + body))
	last := hex.EncodeToString(sum[:16])
	if n > 1 {
		last += "-r" + strconv.Itoa(n)
	}
	seg := keySegment(tool)
	if room := ledger.MaxKeyLen - len("mcp:") - len(":") - len(last); len(seg) > room {
		if seg = strings.Trim(seg[:room], "-"); seg == "" {
			seg = "tool"
		}
	}
	logical := "mcp:" + seg + ":" + last
	if epoch != "" {
		return "hsr1:" + epoch + ":" + logical
	}
	return logical
}

// keySegment maps a tool name into one key segment: lowercase letters,
// digits and '-', at most 40 characters.
func keySegment(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "tool"
	}
	return s
}

// repeatKey is the key of a call without its own key, and the key it
// follows ("" for the first). The keys of identical calls form a chain:
// the derived key, then -r2, -r3 and so on. The call is a retry of the
// chain's last key while that key is younger than the repeat window
// (from its first record) or has not ended (pending, executing,
// uncertain: a new key would run or request it twice); once it has
// ended and the window has passed, the call is a new action under the
// next key, which names the last as its predecessor. A key of the chain
// is only ever made after the one before it, so the last one is found
// by doubling, then halving, in a few status reads.
func (p *Proxy) repeatKey(ctx context.Context, tool, body string) (key, predecessor string, err error) {
	e, err := p.store.Epoch(ctx)
	if err != nil {
		return "", "", err
	}
	nth := func(n int) string { return chainKey(e.Epoch, tool, body, n) }
	if p.opt.RepeatWindow < 0 {
		return nth(1), "", nil
	}
	// found reads the nth key: whether it is recorded, and its record.
	found := func(n int) (ledger.Detail, bool, error) {
		d, err := p.store.Status(ctx, nth(n))
		if errors.Is(err, ledger.ErrNotFound) {
			return d, false, nil
		}
		return d, err == nil, err
	}
	last, ok, err := found(1)
	if err != nil || !ok {
		return nth(1), "", err
	}
	lo, hi := 1, 0 // lo is recorded; hi, once set, is not
	for hi == 0 {
		d, ok, err := found(2 * lo)
		switch {
		case err != nil:
			return "", "", err
		case ok:
			lo, last = 2*lo, d
		default:
			hi = 2 * lo
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		d, ok, err := found(mid)
		switch {
		case err != nil:
			return "", "", err
		case ok:
			lo, last = mid, d
		default:
			hi = mid
		}
	}
	if p.lapsed(last) {
		return nth(lo + 1), nth(lo), nil
	}
	if lo > 1 {
		predecessor = nth(lo - 1)
	}
	return nth(lo), predecessor, nil
}

// lapsed reports whether an identical call after this key is a new
// action: the key has ended (settled, rejected, expired, denied) and its
// first record is older than the repeat window. An archived key keeps no
// record time: archive moves settled history, older than a cut-off the
// operator sets (docs/mcp.md asks for one longer than the window), so it
// counts as older.
func (p *Proxy) lapsed(d ledger.Detail) bool {
	switch d.State {
	case ledger.StateSucceeded, ledger.StateFailed, ledger.StateReconciled,
		ledger.StateRejected, ledger.StateExpired, ledger.StateDenied:
	default:
		return false
	}
	return d.Recorded.IsZero() || p.store.Now().Sub(d.Recorded) >= p.opt.RepeatWindow
}
