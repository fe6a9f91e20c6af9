package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// examples holds one command line per command that --help prints under
// "Example:". A test parses each with the command's own flags, so an
// example cannot name a flag the command lost.
var examples = map[string]string{
	"console":          "tollgate console --operator alice",
	"demo":             "tollgate demo --db /tmp/tollgate-demo.db",
	"record":           "tollgate record refund:le-4411 --kind refund --target acct-7 --body '40 EUR'",
	"guard":            "tollgate guard refund:le-4411 --kind refund --target acct-7 --body '40 EUR' --agent refund-bot --json",
	"report":           "tollgate report refund:le-4411 --permit 0b5e2f4c-9d1a-4c3e-8f7b-2a6d1e9c3b70 --outcome succeeded --ref re_3Nf8",
	"status":           "tollgate status refund:le-4411 --json",
	"show":             "tollgate show refund:le-4411 --payload",
	"list":             "tollgate list --state pending --kind refund --limit 20",
	"approve":          "tollgate approve refund:le-4411 --operator alice",
	"reject":           "tollgate reject refund:le-4411 --reason 'duplicate of le-4410'",
	"reconcile":        "tollgate reconcile refund:le-4411 --result executed --note 'provider shows re_3Nf8 paid'",
	"policy set":       "tollgate policy set 'refund*' --mode approval --ttl 4h --approvers 2",
	"policy list":      "tollgate policy list --json",
	"policy test":      `tollgate policy test --kind refund.card --context '{"amount": 6000}'`,
	"epoch activate":   "tollgate epoch activate --operator alice",
	"epoch show":       "tollgate epoch show --json",
	"operator init":    "tollgate operator init",
	"operators add":    "tollgate operators add bob 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG... bob@laptop'",
	"operators list":   "tollgate operators list",
	"operators remove": "tollgate operators remove bob",
	"agents allow":     "tollgate agents allow bot1 backup-bot",
	"agents revoke":    "tollgate agents revoke bot1 backup-bot",
	"agents list":      "tollgate agents list --json",
	"agents token":     "tollgate agents token create ci-runner --scope agent --json",
	"mcp serve":        "tollgate mcp serve --agent support-bot",
	"mcp proxy":        "tollgate mcp proxy --agent support-bot -- npx -y @example/mailer-mcp",
	"mcp install":      "tollgate mcp install --client claude-code --write .mcp.json --proxy -- npx -y @example/mailer-mcp",
	"watch":            "tollgate watch --warn 15m --exec 'examples/watch-webhook/post.sh'",
	"verify":           "tollgate --db backup.db verify",
	"export":           "tollgate export > evidence.jsonl",
	"backup":           "tollgate backup /var/backups/tollgate/ledger-2026-06-01.db",
	"archive":          "tollgate archive --settled-before 365d --to /var/lib/tollgate/archive-2026.db",
	"migrate":          "tollgate --db postgres://tollgate@db-1/tollgate migrate --from ~/.local/share/tollgate/ledger.db",
	"version":          "tollgate version --json",
	"completion":       "source <(tollgate completion bash)",
}

// exampleLine is the "Example:" block of a command's help.
func exampleLine(name string) string {
	if ex := examples[name]; ex != "" {
		return "Example:\n  " + ex + "\n\n"
	}
	return ""
}

// unknownFlag rewrites the flag package's "flag provided but not
// defined: -operater" as a usage error that names the nearest flag the
// command has, if one is close.
func unknownFlag(fs *flag.FlagSet, err error) error {
	bad, isUnknown := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !isUnknown {
		return usageError{err.Error()}
	}
	bad = strings.TrimLeft(bad, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	msg := fmt.Sprintf("unknown flag --%s", bad)
	if near := nearest(bad, names); near != "" {
		msg += fmt.Sprintf(": did you mean --%s?", near)
	}
	return usageError{msg}
}

// nearest returns the candidate closest to s by edit distance when it is
// close enough to be a typo (at most 2 edits, and fewer than half of s),
// else "". Ties go to the first in sorted order, so the answer is stable.
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	sorted := slices.Clone(candidates)
	slices.Sort(sorted)
	for _, c := range sorted {
		if len(c) <= 1 {
			continue // -h: never a useful suggestion
		}
		d := editDistance(s, c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > 2 || 2*bestD >= len(s) {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment) of a and b: a swapped pair of letters counts as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// unknownCommand is the usage error for a command word that is not one,
// naming the nearest command when one is close.
func unknownCommand(bad string) error {
	msg := fmt.Sprintf("unknown command %q", bad)
	words := slices.Clone(commandOrder)
	for _, n := range commandOrder {
		if first, _, ok := strings.Cut(n, " "); ok && !slices.Contains(words, first) {
			words = append(words, first)
		}
	}
	if near := nearest(bad, words); near != "" {
		msg += fmt.Sprintf(": did you mean %q?", near)
	}
	return usageError{msg + " (see tollgate --help)"}
}
