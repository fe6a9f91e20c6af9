package ledger

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	const epoch = "11111111-2222-4333-8444-555555555555"
	long := strings.Repeat("a", 80)
	tests := []struct {
		in      string
		logical string
		epoch   string
		rule    string // substring of the refusal, "" when valid
	}{
		{"fixture-article-v1", "fixture-article-v1", "", ""},
		{"refund:le-4411", "refund:le-4411", "", ""},
		{"payment:inv-9:attempt-1", "payment:inv-9:attempt-1", "", ""},
		{long, long, "", ""},
		{"hsr1:" + epoch + ":refund:le-4411", "refund:le-4411", epoch, ""},
		{"", "", "", "must not be empty"},
		{long + "a", "", "", "at most 80"},
		{"Refund", "", "", "[a-z0-9-]"},
		{"refund le", "", "", "[a-z0-9-]"},
		{"refund/le", "", "", "[a-z0-9-]"},
		{"..", "", "", "[a-z0-9-]"},
		{"a'b", "", "", "[a-z0-9-]"},
		{"a\x00b", "", "", "[a-z0-9-]"},
		{"a::b", "", "", "empty segment"},
		{":a", "", "", "empty segment"},
		{"a:", "", "", "empty segment"},
		{"hsr1:" + epoch, "", "", "hsr1:<epoch-uuid>:<logical-key>"},
		{"hsr1:ABCDEF12-2222-4333-8444-555555555555:a", "", "", "lowercase canonical UUID"},
		{"hsr1:refund:le-1", "", "", "lowercase canonical UUID"},
		{"hsr1:1111111122224333844455555555555:a", "", "", "lowercase canonical UUID"},
		{"hsr1:" + epoch + ":", "", "", "must not be empty"},
		{"hsr1:" + epoch + ":A", "", "", "[a-z0-9-]"},
		{"x'; DROP TABLE intents; --", "", "", "[a-z0-9-]"},
	}
	for _, tc := range tests {
		k, err := ParseKey(tc.in)
		if tc.rule == "" {
			if err != nil {
				t.Errorf("ParseKey(%q): %v", tc.in, err)
				continue
			}
			if k.Logical != tc.logical || k.Epoch != tc.epoch || k.String() != tc.in {
				t.Errorf("ParseKey(%q) = %+v, String %q", tc.in, k, k.String())
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseKey(%q) accepted, want refusal naming %q", tc.in, tc.rule)
			continue
		}
		var ke *KeyError
		if !errors.As(err, &ke) || !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("ParseKey(%q) error %q, want a *KeyError naming %q", tc.in, err, tc.rule)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"a", "refund:le-1", "hsr1:11111111-2222-4333-8444-555555555555:a:b", "a::b", "hsr1:", "\x1b[2J", "Ａ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("refusal is not ErrInvalidInput: %v", err)
			}
			return
		}
		if k.String() != s {
			t.Fatalf("round trip %q -> %q", s, k.String())
		}
		if len(k.Logical) == 0 || len(k.Logical) > MaxKeyLen {
			t.Fatalf("logical key length %d accepted", len(k.Logical))
		}
		for _, c := range []byte(k.Logical) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == ':') {
				t.Fatalf("accepted byte %q", c)
			}
		}
	})
}
