package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a delivery's signature: "t=UNIX,v1=HEX", where
// HEX is HMAC-SHA256 under the shared secret of "UNIX." followed by the
// body's bytes. The time is signed with the body so that a captured
// delivery cannot be replayed later than the receiver's tolerance.
const SignatureHeader = "Tollgate-Signature"

// DeliveryHeader carries the delivery id (DeliveryID): the same on every
// retry of one event, so a receiver can drop a repeat.
const DeliveryHeader = "Tollgate-Delivery"

// minSecret is the shortest secret accepted: 32 bytes, as long as the MAC.
const minSecret = 32

// ErrBadSignature is returned by Verify for a delivery whose signature is
// missing, malformed, wrong or too old.
var ErrBadSignature = errors.New("bad notification signature")

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a SignatureHeader value for body at now, refusing one
// signed more than tolerance before or after now. It is what a receiver
// written in Go runs; docs/notifications.md shows the same in Python.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("%w: the header is not t=UNIX,v1=HEX", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %d, more than %s from now", ErrBadSignature, sec, tolerance)
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, ts, body))) {
		return fmt.Errorf("%w: the MAC does not match the body", ErrBadSignature)
	}
	return nil
}

// ReadSecret reads a signing secret from a file: never from the command
// line, where every user of the host can read it in the process list. The
// file must not be readable by group or others, and the secret (surrounding
// white space trimmed) must be at least 32 bytes.
func ReadSecret(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("notification secret: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("notification secret %s is mode %04o: it must be readable by its owner only (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("notification secret: %w", err)
	}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) < minSecret {
		return nil, fmt.Errorf("notification secret %s holds %d bytes: at least %d are required (for example: openssl rand -hex 32 > FILE)", path, len(b), minSecret)
	}
	return b, nil
}
