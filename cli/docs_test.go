package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/tollgate-dev/tollgate/ledger"
)

// The documentation's drift test: README.md and docs/*.md against the
// command table the CLI dispatches on, and against the files they link.

// readmeMaxLines keeps the README a front page; reference goes to docs/.
const readmeMaxLines = 400

// pendingDocs are pages other branches add to docs/. The README links
// them already; a link to one is accepted while the file is absent, and
// checked like any other once it exists.
var pendingDocs = []string{"docs/console.md", "docs/postgres-roles.md", "docs/retention.md"}

// docPage is one Markdown file, by its path from the repository's root.
type docPage struct {
	path string
	text string
}

func docPages(t *testing.T) []docPage {
	t.Helper()
	paths, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{"../README.md"}, paths...)
	var pages []docPage
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{path: strings.TrimPrefix(p, "../"), text: string(b)})
	}
	if len(pages) < 2 {
		t.Fatal("docs/ holds no page")
	}
	return pages
}

// mdBlock is a stretch of a page: a fenced block's code, or a paragraph
// outside fences (its lines joined by spaces), with its first line's number.
type mdBlock struct {
	line  int
	fence bool
	lang  string
	text  string
}

func mdBlocks(text string) []mdBlock {
	var blocks []mdBlock
	var cur *mdBlock
	flush := func() {
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
		}
	}
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		isFence := strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")
		switch {
		case cur != nil && cur.fence:
			if isFence {
				flush()
			} else {
				cur.text += line + "\n"
			}
		case isFence:
			flush()
			cur = &mdBlock{line: i + 2, fence: true, lang: strings.TrimSpace(trimmed[3:])}
		case trimmed == "":
			flush()
		case cur == nil:
			cur = &mdBlock{line: i + 1, text: line}
		default:
			cur.text += " " + line
		}
	}
	flush()
	return blocks
}

// shellLangs are the fences whose lines are commands.
var shellLangs = []string{"", "sh", "shell", "bash", "zsh", "console"}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// docToken is a word of a command line, or an operator (| ; & > < ( )
// and line ends) that ends one command.
type docToken struct {
	word string
	op   bool
}

// docTokens splits a command line much as sh would: quotes group, an
// unquoted # starts a comment. In an inline code span (span) | is part
// of a word, since tables write "succeeded\|failed" for the choices, and
// so are < and > (placeholders such as <payload>).
func docTokens(s string, span bool) []docToken {
	var out []docToken
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			out = append(out, docToken{word: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			end()
			out = append(out, docToken{word: "\n", op: true})
		case ch == ' ' || ch == '\t':
			end()
		case ch == '\n' || ch == ';' || ch == '&' || ch == '(' || ch == ')' || (!span && (ch == '|' || ch == '>' || ch == '<')):
			end()
			out = append(out, docToken{word: string(ch), op: true})
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	end()
	return out
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// docInvocation is one "tollgate ..." command line found in the docs.
type docInvocation struct {
	where string
	words []string // the words after "tollgate", up to the end of the command
}

// invocations finds each tollgate command in a list of tokens: the word
// "tollgate" where a command starts (after an operator, at the start, after
// VAR=value assignments, a "$ " prompt, sudo, exec or time).
func invocations(where string, toks []docToken) []docInvocation {
	var out []docInvocation
	atStart := true
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.op {
			atStart = true
			continue
		}
		if !atStart {
			continue
		}
		if envAssign.MatchString(tk.word) || slices.Contains([]string{"$", "sudo", "exec", "time"}, tk.word) {
			continue
		}
		atStart = false
		if tk.word != "tollgate" {
			continue
		}
		inv := docInvocation{where: where}
		for i+1 < len(toks) && !toks[i+1].op {
			i++
			inv.words = append(inv.words, toks[i].word)
		}
		out = append(out, inv)
	}
	return out
}

// docInvocations gathers every tollgate command line in a page: in shell
// fences, in inline code spans, and as the command and args of an MCP
// client's configuration in JSON fences.
func docInvocations(t *testing.T, p docPage) []docInvocation {
	var out []docInvocation
	for _, b := range mdBlocks(p.text) {
		where := fmt.Sprintf("%s:%d", p.path, b.line)
		switch {
		case b.fence && slices.Contains(shellLangs, b.lang):
			code := strings.ReplaceAll(b.text, "\\\n", " ")
			out = append(out, invocations(where, docTokens(code, false))...)
		case b.fence && b.lang == "json":
			var cfg struct {
				MCPServers map[string]struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(b.text), &cfg); err != nil {
				t.Errorf("%s: a JSON block that does not parse: %v", where, err)
			}
			for _, s := range cfg.MCPServers {
				if filepath.Base(s.Command) == "tollgate" {
					out = append(out, docInvocation{where: where, words: s.Args})
				}
			}
		case !b.fence:
			for _, m := range codeSpan.FindAllStringSubmatch(b.text, -1) {
				span := strings.ReplaceAll(m[1], `\|`, "|")
				toks := docTokens(span, true)
				found := invocations(where, toks)
				if len(found) == 0 && len(toks) > 1 && !toks[0].op && strings.Contains(span, " --") && isCommandWord(toks[0].word) {
					// A command without "tollgate" ("guard --wait 10m", a
					// table's "list [--state S]"): its flags are checked too.
					found = invocations(where, append([]docToken{{word: "tollgate"}}, toks...))
				}
				out = append(out, found...)
			}
		}
	}
	return out
}

// isCommandWord reports whether w is a command's first word (guard, or
// policy of "policy set").
func isCommandWord(w string) bool {
	_, grouped := subcommands[w]
	return grouped || slices.Contains(commandOrder, w)
}

// globalValueFlags take a value before the command word.
var globalValueFlags = []string{"db", "retry-for", "attempt-timeout"}

// checkInvocation returns what is wrong with one documented command line:
// a command the CLI does not have, or a flag that command does not take.
func checkInvocation(inv docInvocation, specs map[string]cmdSpec) []string {
	var bad []string
	words := inv.words
	isWord := regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString
	// Global flags, then the command word(s).
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		name, hasValue := flagName(words[0])
		switch {
		case slices.Contains(globalValueFlags, name):
			if !hasValue && len(words) > 1 {
				words = words[1:]
			}
		case name == "help" || name == "h" || name == "version":
		default:
			bad = append(bad, fmt.Sprintf("%s: tollgate has no global flag --%s", inv.where, name))
		}
		words = words[1:]
	}
	if len(words) == 0 || !isWord(words[0]) {
		return bad // tollgate alone (the console), or a placeholder: COMMAND, [ARGS]
	}
	name := words[0]
	if name == "help" {
		return bad
	}
	words = words[1:]
	if _, grouped := subcommands[name]; grouped {
		if len(words) == 0 || !isWord(words[0]) {
			return bad // the group named in prose: "tollgate operators"
		}
		name += " " + words[0]
		words = words[1:]
	}
	spec, ok := specs[name]
	if !ok {
		return append(bad, fmt.Sprintf("%s: `tollgate %s`: no such command", inv.where, name))
	}
	for _, w := range words {
		if w == "--" {
			break // the upstream command of mcp proxy and mcp install --proxy
		}
		w = strings.Trim(w, "[]")
		if rest := strings.TrimLeft(w, "-"); rest == w || rest == "" || !unicode.IsLetter(rune(rest[0])) {
			continue // a positional, "-" for stdin, a negative number
		}
		f, _ := flagName(w)
		if f == "h" || slices.ContainsFunc(spec.flags, func(fl flagSpec) bool { return fl.name == f }) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: `tollgate %s` has no flag --%s", inv.where, name, f))
	}
	return bad
}

// flagName is a flag word's name ("--lease=15m" is lease) and whether its
// value came with it.
func flagName(w string) (string, bool) {
	name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
	return name, hasValue
}

// headingSlugs are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens, repeats numbered.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := mdLinkText.ReplaceAllString(strings.TrimLeft(line, "#"), "$1")
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			seen[s]++
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			seen[s] = 1
		}
		slugs[s] = true
	}
	return slugs
}

var mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsMatchTheCLI fails when the README or a page under docs/ drifts
// from the CLI or from the repository: a command or flag shown that the
// CLI lacks, a command or flag the CLI has that docs/cli.md does not
// document, a relative link (or its #anchor) that leads nowhere, an
// example folder the README does not link, or a README over 400 lines.
func TestDocsMatchTheCLI(t *testing.T) {
	pages := docPages(t)
	specs := map[string]cmdSpec{}
	for _, s := range commandSpecs() {
		specs[s.name] = s
	}
	page := func(path string) string {
		for _, p := range pages {
			if p.path == path {
				return p.text
			}
		}
		t.Fatalf("%s is missing", path)
		return ""
	}
	readme := page("README.md")

	t.Run("README leads", func(t *testing.T) {
		if n := strings.Count(readme, "\n"); n > readmeMaxLines {
			t.Errorf("README.md has %d lines, over %d: move reference into docs/", n, readmeMaxLines)
		}
		for _, want := range []string{"go run . demo", "go test ./..."} {
			if !strings.Contains(strings.Join(strings.SplitN(readme, "\n", 8)[:7], "\n"), want) {
				t.Errorf("README.md no longer opens with %q", want)
			}
		}
	})

	t.Run("commands and flags shown exist", func(t *testing.T) {
		n := 0
		for _, p := range pages {
			for _, inv := range docInvocations(t, p) {
				n++
				for _, msg := range checkInvocation(inv, specs) {
					t.Error(msg)
				}
			}
		}
		if n < 50 {
			t.Errorf("found only %d tollgate command lines in the docs: the parser lost them", n)
		}
		// A flag named alone ("`--guard-reads` guards them too") must be
		// some command's.
		known := []string{"version"} // the one global flag without a value
		for _, s := range specs {
			for _, f := range s.flags {
				known = append(known, f.name)
			}
		}
		for _, p := range pages {
			for _, b := range mdBlocks(p.text) {
				for _, m := range codeSpan.FindAllStringSubmatch(b.text, -1) {
					word := strings.Fields(m[1])[0]
					if b.fence || !strings.HasPrefix(word, "--") || word == "--" {
						continue
					}
					if f, _ := flagName(word); !slices.Contains(known, f) {
						t.Errorf("%s:%d: `%s`: no command has the flag --%s", p.path, b.line, m[1], f)
					}
				}
			}
		}
	})

	t.Run("every command and flag is documented", func(t *testing.T) {
		cliPage := page("docs/cli.md")
		sections := map[string]string{}
		for _, sec := range strings.Split(cliPage, "\n### ")[1:] {
			head, body, _ := strings.Cut(sec, "\n")
			if name, ok := strings.CutPrefix(strings.Trim(head, "` "), "tollgate "); ok {
				sections[name] = body
			}
		}
		common := []string{"db", "json", "retry-for", "attempt-timeout", "help"}
		for _, f := range common {
			if !strings.Contains(cliPage, "`--"+f) {
				t.Errorf("docs/cli.md does not document the flag --%s every command takes", f)
			}
		}
		for _, name := range commandOrder {
			if !regexp.MustCompile("`(tollgate )?" + regexp.QuoteMeta(name) + "[` ]").MatchString(readme) {
				t.Errorf("README.md's command table does not list %q", name)
			}
			body, ok := sections[name]
			if !ok {
				t.Errorf("docs/cli.md has no section \"### `tollgate %s`\"", name)
				continue
			}
			for _, f := range specs[name].flags {
				if !slices.Contains(common, f.name) && !strings.Contains(body, "--"+f.name) {
					t.Errorf("docs/cli.md, `tollgate %s`: the flag --%s is not documented", name, f.name)
				}
			}
		}
		for name := range sections {
			if _, ok := specs[name]; !ok {
				t.Errorf("docs/cli.md documents `tollgate %s`, which is no command", name)
			}
		}
	})

	t.Run("links resolve", func(t *testing.T) {
		slugs := map[string]map[string]bool{}
		for _, p := range pages {
			slugs[p.path] = headingSlugs(p.text)
		}
		for _, p := range pages {
			for _, b := range mdBlocks(p.text) {
				if b.fence {
					continue
				}
				text := codeSpan.ReplaceAllString(b.text, "")
				for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
					target := m[1]
					if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
						continue // https:, mailto:
					}
					where := fmt.Sprintf("%s:%d", p.path, b.line)
					file, anchor, _ := strings.Cut(target, "#")
					rel := p.path
					if file != "" {
						rel = filepath.ToSlash(filepath.Join(filepath.Dir(p.path), file))
					}
					if _, err := os.Stat(filepath.Join("..", rel)); err != nil {
						if slices.Contains(pendingDocs, rel) {
							t.Logf("%s: %s is not here yet (another branch adds it)", where, rel)
							continue
						}
						t.Errorf("%s: the link %s leads to no file (%s)", where, target, rel)
						continue
					}
					if anchor == "" || !strings.HasSuffix(rel, ".md") {
						continue
					}
					s, ok := slugs[rel]
					if !ok {
						b, err := os.ReadFile(filepath.Join("..", rel))
						if err != nil {
							t.Fatal(err)
						}
						s = headingSlugs(string(b))
						slugs[rel] = s
					}
					if !s[anchor] {
						t.Errorf("%s: the link %s: %s has no heading #%s", where, target, rel, anchor)
					}
				}
			}
		}
	})

	t.Run("README links every example", func(t *testing.T) {
		entries, err := os.ReadDir("../examples")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && !strings.Contains(readme, "](examples/"+e.Name()+"/") {
				t.Errorf("README.md does not link examples/%s/", e.Name())
			}
		}
	})
}

// TestPostgresDocStatesTheSchema: docs/postgresql.md names the schema
// version this build writes (the baseline, or the newest migration on
// top of it), so the page never says an old one.
func TestPostgresDocStatesTheSchema(t *testing.T) {
	newest := ledger.SchemaVersionOf("postgres://localhost/tollgate")
	b, err := os.ReadFile("../docs/postgresql.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	if want := fmt.Sprintf("this schema is version %d;", newest); !strings.Contains(text, want) {
		t.Fatalf("docs/postgresql.md does not say %q", want)
	}
}
