package termsvg

import (
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "redraw docs/console.svg from the console's golden")

func TestRenderIsWellFormedAndEscaped(t *testing.T) {
	screen := "key <a href=x> & \"quoted\" 'it'\n\x1b[31mred\x07\n\nlast line   \n"
	svg := Render(screen, "tollgate <console>")
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	var texts []string
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if c, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(c)) != "" {
			texts = append(texts, string(c))
		}
	}
	want := []string{"tollgate <console>", `key <a href=x> & "quoted" 'it'`, "\uFFFD[31mred\uFFFD", "last line"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("texts %q, want %q", texts, want)
	}
}

// TestConsolePicture keeps the README's picture of the console true: it
// is drawn from a golden of the console's UI tests, which those tests
// keep equal to what the console shows.
func TestConsolePicture(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "..", "ui", "testdata", pictureGolden))
	if err != nil {
		t.Fatal(err)
	}
	got := Render(string(golden), "tollgate console")
	path := filepath.Join("..", "..", "docs", "console.svg")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got) {
		t.Fatalf("docs/console.svg is not drawn from ui/testdata/%s: run go test ./internal/termsvg -run TestConsolePicture -update (scripts/console-picture)", pictureGolden)
	}
}
