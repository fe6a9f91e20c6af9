// Package safetext makes untrusted text safe to put on a terminal. Payload
// fields, keys, agent names and notes come from agents and operators; any
// of them may carry escape sequences that clear a screen, set a window
// title or reorder text. It is its own package because both the console and
// the command line print such text, and both must do it the same way.
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could act on a terminal or
// hide text made visible as a backslash escape, and nothing dropped: C0
// controls (CR, BS and ESC included, which also disarms CSI, OSC and DCS
// sequences), DEL, C1 controls, format characters (zero-width, bidi
// overrides and isolates), line and paragraph separators, and invalid
// UTF-8 bytes. A literal backslash is doubled so that an escape in the
// output always means the character, never text that looked like one.
func Escape(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, false)
	return b.String()
}

// EscapeMultiline is Escape for long text shown in a pane: a newline is
// shown as \n and also breaks the line, so a body keeps its shape.
func EscapeMultiline(s string) string {
	if isPlain(s) && !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, true)
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

func write(b *strings.Builder, s string, multiline bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
			i++
			continue
		}
		i += n
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
			if multiline {
				b.WriteByte('\n')
			}
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		case r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Cf, r), r == 0x2028, r == 0x2029:
			writeU(b, r)
		default:
			b.WriteRune(r)
		}
	}
}

func writeU(b *strings.Builder, r rune) {
	if r > 0xffff {
		b.WriteString(`\U`)
		for sh := 28; sh >= 0; sh -= 4 {
			b.WriteByte(hexDigits[r>>uint(sh)&0xf])
		}
		return
	}
	b.WriteString(`\u`)
	for sh := 12; sh >= 0; sh -= 4 {
		b.WriteByte(hexDigits[r>>uint(sh)&0xf])
	}
}

// EscapeJSON rewrites encoded JSON so that every DEL, C1 control, format
// character (zero-width, bidi overrides and isolates) and line or
// paragraph separator is written as a \uXXXX escape (astral ones as a
// surrogate pair). Such characters can only occur inside JSON strings,
// where the escape means the same character, so a parser reads the same
// value while a terminal showing the raw line shows nothing hidden.
func EscapeJSON(b []byte) []byte {
	plain := true
	for _, c := range b {
		if c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r) {
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				out = appendU4(appendU4(out, r1), r2)
			} else {
				out = appendU4(out, r)
			}
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func appendU4(b []byte, r rune) []byte {
	b = append(b, '\\', 'u')
	for sh := 12; sh >= 0; sh -= 4 {
		b = append(b, hexDigits[r>>uint(sh)&0xf])
	}
	return b
}

// Disarm escapes only what could act on a terminal or hide text (as
// Escape does) and leaves every other character, backslashes included,
// as it is. It is for text being typed into an input field: applied after
// each keystroke it changes nothing twice, so a typed backslash stays one
// backslash while a pasted ESC or U+202E shows as its escape.
func Disarm(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		if s[i] == '\\' {
			b.WriteByte('\\') // kept single: Disarm must change nothing twice
		} else {
			write(&b, s[i:i+size], false)
		}
		i += size
	}
	return b.String()
}
