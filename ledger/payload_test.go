package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalKnownValues(t *testing.T) {
	p := Payload{Kind: "draft", Target: "fixture-article", Body: "Fixture text"}
	want := `{"body":"Fixture text","kind":"draft","target":"fixture-article"}`
	if got := string(p.Canonical()); got != want {
		t.Fatalf("canonical = %s", got)
	}
	tricky := Payload{Kind: "a/b<c>&d", Target: "\x00\x1f\x7f\u0080é", Body: "\"\\\n\r\t\b\f😀\u2028"}
	want = `{"body":"\"\\\n\r\t\b\f\ud83d\ude00\u2028","kind":"a/b<c>&d","target":"\u0000\u001f\u007f\u0080\u00e9"}`
	if got := string(tricky.Canonical()); got != want {
		t.Fatalf("canonical = %s\nwant        %s", got, want)
	}
}

func TestPayloadValidate(t *testing.T) {
	ok := strings.Repeat("😀", MaxFieldRunes) // 4000 code points, 16000 bytes
	tests := []struct {
		p    Payload
		rule string
	}{
		{Payload{"k", "t", ok}, ""},
		{Payload{"k", "t", ok + "a"}, "at most 4000 code points"},
		{Payload{"k", "t\xff", "b"}, "valid UTF-8"},
		{Payload{"k\xed\xa0\x80", "t", "b"}, "valid UTF-8"}, // an encoded lone surrogate
		{Payload{"", "", ""}, ""},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		if (err == nil) != (tc.rule == "") || err != nil && !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("Validate(%d runes body) = %v, want %q", utf8.RuneCountInString(tc.p.Body), err, tc.rule)
		}
	}
}

func TestDecodePayload(t *testing.T) {
	tests := []struct {
		in   string
		want Payload
		rule string
	}{
		{`{"kind":"k","target":"t","body":"b"}`, Payload{"k", "t", "b"}, ""},
		{`{"body":"\ud83d\ude00\u00e9\/","target":"","kind":"x"}`, Payload{"x", "", "😀é/"}, ""},
		{`{"kind":"k","target":"t"}`, Payload{}, "exactly the fields"},
		{`{"kind":"k","target":"t","body":"b","extra":"x"}`, Payload{}, "only the fields"},
		{`{"kind":"k","kind":"k","target":"t","body":"b"}`, Payload{}, "twice"},
		{`{"kind":1,"target":"t","body":"b"}`, Payload{}, "must be a string"},
		{`{"kind":"\ud800","target":"t","body":"b"}`, Payload{}, "lone surrogates"},
		{`{"kind":"\udc00x","target":"t","body":"b"}`, Payload{}, "lone surrogates"},
		{`{"kind":"k","target":"t","body":"b"} {}`, Payload{}, "nothing may follow"},
		{`["k","t","b"]`, Payload{}, "JSON object"},
		{"{\"kind\":\"\xff\",\"target\":\"t\",\"body\":\"b\"}", Payload{}, "UTF-8"},
	}
	for _, tc := range tests {
		p, err := DecodePayload([]byte(tc.in))
		if tc.rule == "" {
			if err != nil || p != tc.want {
				t.Errorf("DecodePayload(%s) = %+v, %v", tc.in, p, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("DecodePayload(%s) error %v, want %q", tc.in, err, tc.rule)
		}
	}
}

// randomText mixes ASCII, control characters, the characters Go's encoder
// would escape but Python does not, DEL, C1, BMP and astral code points.
func randomText(r *rand.Rand, max int) string {
	pools := [][2]rune{{0x20, 0x7e}, {0, 0x1f}, {0x7f, 0x9f}, {0xa0, 0x7ff}, {0x800, 0xd7ff}, {0xe000, 0xfffd}, {0x10000, 0x10ffff}}
	specials := []rune{'/', '<', '>', '&', '"', '\\', 0x2028, 0x2029, 0xfeff, 0x202e}
	n := r.IntN(max + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if r.IntN(5) == 0 {
			b.WriteRune(specials[r.IntN(len(specials))])
			continue
		}
		p := pools[r.IntN(len(pools))]
		b.WriteRune(p[0] + rune(r.IntN(int(p[1]-p[0]+1))))
	}
	return b.String()
}

// TestDigestMatchesPython hashes random payloads with python3's json.dumps
// and compares every digest with ours.
func TestDigestMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the Python cross-check needs it")
	}
	const n = 2500
	r := rand.New(rand.NewPCG(1, 2))
	ps := make([]Payload, n)
	var in bytes.Buffer
	for i := range ps {
		ps[i] = Payload{randomText(r, 20), randomText(r, 40), randomText(r, 300)}
		if i%500 == 0 {
			ps[i].Body = randomText(r, MaxFieldRunes)
		}
		line, _ := json.Marshal(ps[i])
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, "-c", `import sys, json, hashlib
for line in sys.stdin:
    p = json.loads(line)
    raw = json.dumps(p, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    print(hashlib.sha256(raw.encode("utf-8")).hexdigest())
`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i := 0
	for ; sc.Scan(); i++ {
		if got := ps[i].Digest(); got != sc.Text() {
			t.Fatalf("payload %d: digest %s, python %s\ncanonical %s", i, got, sc.Text(), ps[i].Canonical())
		}
	}
	if i != n {
		t.Fatalf("python printed %d digests, want %d", i, n)
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add("draft", "a/b<c>", "x\x00\x7f\u2028😀")
	f.Add("", "", "\xff")
	f.Fuzz(func(t *testing.T, kind, target, body string) {
		p := Payload{kind, target, body}
		c := p.Canonical()
		if !json.Valid(c) {
			t.Fatalf("invalid JSON: %s", c)
		}
		for _, b := range c {
			if b < 0x20 || b > 0x7e {
				t.Fatalf("non-printable-ASCII byte %#x in %s", b, c)
			}
		}
		if p.Validate() != nil {
			return
		}
		back, err := DecodePayload(c)
		if err != nil || back != p {
			t.Fatalf("round trip of %q: %+v, %v", c, back, err)
		}
	})
}

func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(`{"kind":"k","target":"t","body":"b"}`))
	f.Add([]byte(`{"kind":"\ud800","target":"t","body":"b"}`))
	f.Add([]byte(`{"kind":"k","target":"t","body":"b"}x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePayload(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("refusal is not ErrInvalidInput: %v", err)
			}
			if strings.Contains(err.Error(), string(data)) && len(data) > 8 {
				t.Fatalf("error echoes the input")
			}
			return
		}
		if p.Validate() != nil {
			t.Fatalf("accepted an invalid payload")
		}
		var std map[string]string
		if json.Unmarshal(data, &std) != nil || std["kind"] != p.Kind || std["target"] != p.Target || std["body"] != p.Body {
			t.Fatalf("disagrees with encoding/json on %q", data)
		}
	})
}
