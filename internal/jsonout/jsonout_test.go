package jsonout

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMarshalKeepsHTMLCharacters(t *testing.T) {
	b, err := Marshal(map[string]string{"c": "context.amount <= 50 && a > b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"c":"context.amount <= 50 && a > b"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func TestUnescapeHTML(t *testing.T) {
	for _, s := range []string{
		"a <= b", "x && y", "<>&", `a\u003cb typed`, `\`, `\\`, `ends with \`, "\\u003c",
		"tab\there", "quote\"", "<\\u0026>",
	} {
		esc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := UnescapeHTML(esc)
		if bytes.Contains(got, []byte(`\u003c`)) && !bytes.Contains([]byte(s), []byte(`u003c`)) {
			t.Errorf("%q: still escaped: %s", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Errorf("%q: %s reads back as %q (%v)", s, got, back, err)
		}
	}
}

func TestWriterReportsTheWholeWrite(t *testing.T) {
	var b bytes.Buffer
	p := []byte(`{"a":"\u003c\u003e\u0026"}` + "\n")
	n, err := Writer(&b).Write(p)
	if err != nil || n != len(p) {
		t.Fatalf("n %d err %v", n, err)
	}
	if b.String() != `{"a":"<>&"}`+"\n" {
		t.Fatalf("wrote %q", b.String())
	}
}
