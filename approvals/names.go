package approvals

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// MaxNameLen bounds agent and operator names, in bytes.
const MaxNameLen = 200

// ErrBadName matches every refusal of an agent or operator name.
var ErrBadName = errors.New("invalid name")

// CheckName refuses a name that could hide what it is: invalid UTF-8,
// control characters (tab, CR and ESC included) and format characters
// (zero-width, soft hyphen, bidi controls), or one longer than MaxNameLen.
// what names the field in the error ("agent", "operator").
func CheckName(what, s string) error {
	if len(s) > MaxNameLen {
		return fmt.Errorf("%w: %s must be at most %d bytes", ErrBadName, what, MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s must be valid UTF-8", ErrBadName, what)
	}
	for i, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			return fmt.Errorf("%w: %s must not contain control or format characters (U+%04X at byte %d)", ErrBadName, what, r, i)
		}
	}
	return nil
}

// NameKey is the form two names are compared in, so that an operator
// cannot pass for someone else, nor an agent's own name for another:
// format and control characters are removed, surrounding space trimmed,
// inner runs of space made one, and each space-separated part mapped by
// PRECIS UsernameCaseMapped (RFC 8265: width mapping, NFC, case folding).
// Bot-1, "bot-1 ", fullwidth ｂｏｔ-1 and bot-1 with a zero-width space are
// all bot-1. A part PRECIS refuses (a symbol, an emoji) is compared by
// NFKC and Unicode case folding instead, so every name has a key.
func NameKey(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	parts := strings.Fields(s)
	for i, p := range parts {
		if v, err := precis.UsernameCaseMapped.String(p); err == nil {
			parts[i] = v
			continue
		}
		parts[i] = cases.Fold().String(norm.NFKC.String(p))
	}
	return strings.Join(parts, " ")
}

// SameName reports whether two names are the same person or agent.
func SameName(a, b string) bool { return NameKey(a) == NameKey(b) }
