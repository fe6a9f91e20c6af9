package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// shellWords splits a command line as sh would for the plain words and
// quotes the examples use, stopping at a redirection or a closing ")".
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(line[i+1:], ch)
			if end < 0 {
				t.Fatalf("unbalanced quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case ch == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case (ch == '>' || ch == ')' || ch == '|') && !inWord:
			return words
		case ch == ')':
			words = append(words, cur.String())
			return words
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestHelpExampleForEveryCommand: every command in the table the CLI
// dispatches on is in the top usage's order, has an example, and its
// example parses with that command's own flags, global flags included.
func TestHelpExampleForEveryCommand(t *testing.T) {
	cs := commands()
	for name := range cs {
		if !slices.Contains(commandOrder, name) {
			t.Errorf("%q is missing from commandOrder (tollgate --help does not list it)", name)
		}
	}
	for _, name := range commandOrder {
		if _, ok := cs[name]; !ok {
			t.Errorf("commandOrder lists %q, which is no command", name)
		}
	}
	for name := range examples {
		if _, ok := cs[name]; !ok {
			t.Errorf("an example for %q, which is no command", name)
		}
	}
	for _, name := range commandOrder {
		ex := examples[name]
		if ex == "" {
			t.Errorf("%s: no example in its --help", name)
			continue
		}
		_, inv, ok := strings.Cut(ex, "tollgate ")
		if !ok {
			t.Errorf("%s: the example %q does not run tollgate", name, ex)
			continue
		}
		words := shellWords(t, inv)
		global := flag.NewFlagSet("tollgate", flag.ContinueOnError)
		global.SetOutput(io.Discard)
		global.String("db", "", "")
		if err := global.Parse(words); err != nil {
			t.Errorf("%s: %q: global flags: %v", name, ex, err)
			continue
		}
		words = global.Args()
		n := len(strings.Fields(name))
		if len(words) < n || strings.Join(words[:n], " ") != name {
			t.Errorf("%s: the example %q runs another command", name, ex)
			continue
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("db", "", "")
		fs.Bool("json", false, "")
		cs[name].bind(fs)
		if _, err := parseInterspersed(fs, words[n:]); err != nil {
			t.Errorf("%s: the example %q does not parse: %v", name, ex, err)
		}
		var out bytes.Buffer
		if code := Main(context.Background(), append(strings.Fields(name), "--help"), Env{Stdout: &out, Stderr: io.Discard}); code != ExitOK ||
			!strings.Contains(out.String(), "Example:\n  "+ex+"\n") {
			t.Errorf("%s --help (exit %d) does not show its example:\n%s", name, code, out.String())
		}
	}
}

// TestHelpSuggestsNearestFlag: for every flag of every command, the flag
// with two letters swapped is refused as a usage error that names it.
func TestHelpSuggestsNearestFlag(t *testing.T) {
	cs := commands()
	for _, name := range commandOrder {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.String("db", "", "")
		fs.Bool("json", false, "")
		cs[name].bind(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if len(f.Name) < 4 {
				return
			}
			typo := []byte(f.Name)
			i := 1
			for i+2 < len(typo) && typo[i] == typo[i+1] {
				i++
			}
			typo[i], typo[i+1] = typo[i+1], typo[i]
			var stderr bytes.Buffer
			code := Main(context.Background(), append(strings.Fields(name), "--"+string(typo), "x"),
				Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }})
			want := "unknown flag --" + string(typo) + ": did you mean --" + f.Name + "?"
			if code != ExitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("%s --%s: exit %d, want %d and %q in:\n%s", name, typo, code, ExitUsage, want, stderr.String())
			}
		})
	}
}

func TestHelpNearest(t *testing.T) {
	names := []string{"operator", "key", "reason", "json", "db", "h", "help"}
	for in, want := range map[string]string{"operater": "operator", "opreator": "operator", "ky": "", "resaon": "reason",
		"jsno": "json", "x": "", "zzzzzzzz": "", "dbb": "db", "hepl": "help"} {
		if got := nearest(in, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := editDistance("abc", "acb"); got != 1 {
		t.Errorf("a swap is %d edits", got)
	}
}
