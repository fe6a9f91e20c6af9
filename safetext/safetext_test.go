package safetext

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tollgate-dev/tollgate/internal/testdata"
)

func TestEscape(t *testing.T) {
	for _, h := range testdata.HostileStrings(t) {
		if got := Escape(h.Text); got != h.Escaped {
			t.Errorf("%s: Escape(%q) = %q, want %q", h.Name, h.Text, got, h.Escaped)
		}
	}
	// Invalid UTF-8 cannot be written in the corpus's JSON.
	if got := Escape("bad\xffbyte"); got != `bad\xffbyte` {
		t.Errorf("invalid UTF-8: %q", got)
	}
	if got := EscapeMultiline("a\nb\rc"); got != "a\\n\nb\\rc" {
		t.Errorf("multiline = %q", got)
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("\x1b]0;x\x07\r\u202e\u0085")
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
				t.Fatalf("Escape(%q) let %U through", s, r)
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		// Nothing is dropped: the escapes decode back to the input.
		if back := unescape(out); back != s {
			t.Fatalf("round trip %q -> %q -> %q", s, out, back)
		}
	})
}

// unescape reverses Escape, to prove that it loses nothing.
func unescape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch s[i] {
		case '\\':
			b = append(b, '\\')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'b':
			b = append(b, '\b')
		case 'x':
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		case 'u':
			v, _ := strconv.ParseUint(s[i+1:i+5], 16, 32)
			b = utf8.AppendRune(b, rune(v))
			i += 4
		case 'U':
			v, _ := strconv.ParseUint(s[i+1:i+9], 16, 32)
			b = utf8.AppendRune(b, rune(v))
			i += 8
		}
	}
	return string(b)
}

// TestEscapeJSON: the escaped JSON decodes to the same value and carries
// no raw DEL, C1 or format character.
func TestEscapeJSON(t *testing.T) {
	v := map[string]string{"s": "a\x7fb\u009bc\u202ed\u200be\U000E0001f\u2028g<h>&\x1b"}
	raw, _ := json.Marshal(v)
	got := EscapeJSON(raw)
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["s"] != v["s"] {
		t.Fatalf("round trip: %q %v", back, err)
	}
	for _, bad := range []string{"\x7f", "\u009b", "\u202e", "\u200b", "\U000E0001", "\u2028", "\x1b"} {
		if strings.Contains(string(got), bad) {
			t.Errorf("%q left raw in %s", bad, got)
		}
	}
	if !strings.Contains(string(got), `\udb40\udc01`) {
		t.Errorf("astral format character not a surrogate pair: %s", got)
	}
}

// TestDisarm: typed text keeps its backslashes and letters; every
// dangerous character of the corpus shows as its escape; a second pass
// changes nothing.
func TestDisarm(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`C:\path é 中`, `C:\path é 中`},
		{"a\x1b]0;x\x07b", `a\x1b]0;x\x07b`},
		{"pay\u202eusd", `pay\u202eusd`},
		{"bad\xffbyte", `bad\xffbyte`},
	} {
		got := Disarm(tc.in)
		if got != tc.want {
			t.Errorf("Disarm(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := Disarm(got); again != got {
			t.Errorf("Disarm is not stable: %q then %q", got, again)
		}
	}
	for _, h := range testdata.HostileStrings(t) {
		if d := Disarm(h.Text); Disarm(d) != d || strings.ContainsAny(d, "\x1b\r\u202e\u200b\u009b\x7f") {
			t.Errorf("%s: Disarm left a dangerous character or is unstable: %q", h.Name, d)
		}
	}
}
