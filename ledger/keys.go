package ledger

import (
	"fmt"
	"strings"
)

// MaxKeyLen is the longest logical key accepted, in bytes (keys are ASCII).
const MaxKeyLen = 80

// authorityPrefix marks an epoch-qualified authority key.
const authorityPrefix = "hsr1:"

// Key is a parsed action key. Logical is the destination's stable business
// key; Epoch is the operator epoch it was admitted under, empty for a plain
// logical key. The two are kept apart so that the destination never sees the
// epoch and an operator can read the business identity at a glance.
type Key struct {
	Logical string
	Epoch   string
}

// String returns the authority key: the logical key itself, or
// hsr1:<epoch>:<logical> when the key carries an epoch.
func (k Key) String() string {
	if k.Epoch == "" {
		return k.Logical
	}
	return authorityPrefix + k.Epoch + ":" + k.Logical
}

// KeyError reports a key that breaks the key grammar. Rule names the broken
// rule in words an agent author can act on. The offending input is quoted
// with Go escapes so that control characters never reach a terminal raw.
type KeyError struct {
	Input string
	Rule  string
}

// Error implements error.
func (e *KeyError) Error() string {
	in := e.Input
	if len(in) > 100 {
		in = in[:100] + "..."
	}
	return fmt.Sprintf("invalid key %q: %s", in, e.Rule)
}

// Is lets errors.Is(err, ErrInvalidInput) match every key refusal.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidInput }

// ParseKey parses an authority key (a logical key, or hsr1:<epoch>:<logical>).
// It runs before any SQL so that a malformed key never reaches the ledger.
func ParseKey(s string) (Key, error) {
	if strings.HasPrefix(s, authorityPrefix) {
		rest := s[len(authorityPrefix):]
		i := strings.IndexByte(rest, ':')
		if i < 0 {
			return Key{}, &KeyError{s, "an hsr1: key must be hsr1:<epoch-uuid>:<logical-key>"}
		}
		epoch := rest[:i]
		if err := checkEpoch(epoch); err != nil {
			return Key{}, &KeyError{s, err.Error()}
		}
		logical := rest[i+1:]
		if err := checkLogical(logical); err != nil {
			return Key{}, &KeyError{s, err.Error()}
		}
		return Key{Logical: logical, Epoch: epoch}, nil
	}
	if err := checkLogical(s); err != nil {
		return Key{}, &KeyError{s, err.Error()}
	}
	return Key{Logical: s}, nil
}

// ParseEpoch checks that s is a lowercase canonical UUID, the only epoch form.
func ParseEpoch(s string) (string, error) {
	if err := checkEpoch(s); err != nil {
		return "", fmt.Errorf("invalid epoch %q: %w", s, err)
	}
	return s, nil
}

func checkLogical(s string) error {
	if s == "" {
		return fmt.Errorf("a logical key must not be empty")
	}
	if len(s) > MaxKeyLen {
		return fmt.Errorf("a logical key is at most %d characters (got %d)", MaxKeyLen, len(s))
	}
	segStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			if segStart {
				return fmt.Errorf("a logical key has no empty segment between ':' separators")
			}
			segStart = true
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			segStart = false
		default:
			return fmt.Errorf("a logical key uses only [a-z0-9-] segments joined by ':' (found %q at byte %d)", rune(c), i)
		}
	}
	if segStart {
		return fmt.Errorf("a logical key has no empty segment between ':' separators")
	}
	return nil
}

func checkEpoch(s string) error {
	const rule = "the epoch must be a lowercase canonical UUID (8-4-4-4-12 hex digits)"
	if len(s) != 36 {
		return fmt.Errorf("%s", rule)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("%s", rule)
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return fmt.Errorf("%s", rule)
			}
		}
	}
	return nil
}
