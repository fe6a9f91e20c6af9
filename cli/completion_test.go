package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// helpCommands reads the command names from `tollgate --help` and each
// command's flags from its own --help: what a user can type, found
// independently of the completion generator.
func helpCommands(t *testing.T, db string) map[string][]string {
	t.Helper()
	r := run(t, db, "", "--help")
	want(t, r, 0)
	_, list, _ := strings.Cut(r.stdout, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	out := map[string][]string{}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[0]
		if len(f) > 1 && !strings.Contains(line, name+"  ") {
			name += " " + f[1] // a subcommand: "policy set"
		}
		h := run(t, db, "", append(strings.Fields(name), "--help")...)
		want(t, h, 0)
		if !strings.HasPrefix(h.stdout, "Usage: tollgate "+name+" ") {
			t.Fatalf("%q is not the command its help names:\n%s", name, h.stdout)
		}
		for _, m := range flagLine.FindAllStringSubmatch(h.stdout, -1) {
			out[name] = append(out[name], m[1])
		}
	}
	if len(out) < 25 {
		t.Fatalf("only %d commands in tollgate --help:\n%s", len(out), r.stdout)
	}
	return out
}

// TestCompletionCoversEveryCommandAndFlag: each script names every
// command, subcommand and flag the help lists, and the shell that runs
// it accepts it (bash always; zsh and fish where installed).
func TestCompletionCoversEveryCommandAndFlag(t *testing.T) {
	db := newDB(t)
	cmds := helpCommands(t, db)
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := run(t, db, "", "completion", shell)
		want(t, r, 0)
		script := r.stdout
		for name, flags := range cmds {
			for _, w := range strings.Fields(name) {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(script) {
					t.Errorf("%s: the command word %q (%s) is missing", shell, w, name)
				}
			}
			if !strings.Contains(script, name) {
				t.Errorf("%s: the command %q is missing", shell, name)
			}
			for _, f := range flags {
				if !strings.Contains(script, "--"+f) && !strings.Contains(script, "-l "+f+" ") {
					t.Errorf("%s: %s's flag --%s is missing", shell, name, f)
				}
			}
		}
		file := filepath.Join(dir, "tollgate."+shell)
		os.WriteFile(file, []byte(script), 0o600)
		sh, err := exec.LookPath(shell)
		if err != nil {
			if shell == "bash" {
				t.Fatal("bash is missing")
			}
			t.Logf("%s is not installed: its script's syntax is not checked here", shell)
			continue
		}
		if out, err := exec.Command(sh, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n rejects the script: %v\n%s", shell, err, out)
		}
		if shell == "zsh" {
			// Loaded as a user loads it: after compinit, sourced.
			load := exec.Command(sh, "-f", "-c", "autoload -Uz compinit && compinit -u -D && source "+file+" && (( $+functions[_tollgate] )) && [[ ${_comps[tollgate]} == _tollgate ]]")
			load.Env = append(os.Environ(), "HOME="+dir)
			if out, err := load.CombinedOutput(); err != nil {
				t.Errorf("zsh does not load the script: %v\n%s", err, out)
			}
		}
	}
	if r := run(t, db, "", "completion", "tcsh"); r.code != cli.ExitUsage {
		t.Fatalf("an unknown shell: %d %s", r.code, r.stderr)
	}
}

// TestCompletionAnswers asks the bash (and, where installed, fish)
// completion what a user pressing Tab would get: commands, subcommands,
// a flag's fixed values, and pending keys read from the ledger the line
// names.
func TestCompletionAnswers(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval"), cli.ExitOK)
	for _, k := range []string{"refund:le-1", "refund:le-2"} {
		want(t, run(t, db, "", "guard", k, "--kind", "refund", "--target", "a", "--body", "b"), cli.ExitRetry)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "TOLLGATE_DB=", "HOME="+dir,
		"XDG_DATA_HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	script := filepath.Join(dir, "tollgate.bash")
	os.WriteFile(script, []byte(run(t, db, "", "completion", "bash").stdout), 0o600)
	bash := func(line string) string {
		cmd := exec.Command("bash", "-c", `source "$1"; COMP_LINE=$2; COMP_POINT=${#COMP_LINE}; _tollgate; printf '%s ' "${COMPREPLY[@]}"`, "_", script, line)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", line, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for line, wantReply := range map[string]string{
		"tollgate gu":                          "guard",
		"tollgate policy ":                     "set list test",
		"tollgate mcp s":                       "serve",
		"tollgate report k --outcome ":         "succeeded failed unknown",
		"tollgate policy set x --m":            "--mode",
		"tollgate --db " + db + " approve ":    "refund:le-2 refund:le-1",
		"tollgate --db " + db + " reconcile ":  "",
		"tollgate guard k --kind refund --ta":  "--target",
		"tollgate completion ":                 "bash zsh fish",
		"tollgate list --state pen":            "pending",
		"tollgate --db " + db + " status k ":   "",
		"tollgate --db " + db + " show refund": "refund:le-2 refund:le-1",
	} {
		if got := bash(line); got != wantReply {
			t.Errorf("bash: %q completes to %q, want %q", line, got, wantReply)
		}
	}
	// bash splits words at colons: the reply is what follows the last one.
	if got := bash("tollgate --db " + db + " approve refund:le-"); got != "le-2 le-1" {
		t.Errorf("bash: a key after its colon: %q", got)
	}

	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Log("fish is not installed: only its syntax could be checked")
		return
	}
	fscript := filepath.Join(dir, "tollgate.fish")
	os.WriteFile(fscript, []byte(run(t, db, "", "completion", "fish").stdout), 0o600)
	for line, wantReply := range map[string]string{
		"tollgate gu":                       "guard",
		"tollgate policy ":                  "list set test",
		"tollgate --db " + db + " approve ": "refund:le-1 refund:le-2",
		"tollgate report k --outcome ":      "failed succeeded unknown",
	} {
		cmd := exec.Command(fish, "-N", "-c", `source $argv[1]; complete -C $argv[2]`, fscript, line)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			word, _, _ := strings.Cut(l, "\t")
			got = append(got, word)
		}
		if err != nil || strings.Join(got, " ") != wantReply {
			t.Errorf("fish: %q completes to %q (%v), want %q", line, got, err, wantReply)
		}
	}
}
