package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Shell completion, generated from the command table Main dispatches on
// and from each command's flags bound exactly as Main binds them, so a
// command or flag cannot be missing from it.

// cmdSpec is one command as completion sees it.
type cmdSpec struct {
	name, summary string
	flags         []flagSpec
	// keys is the state whose keys complete the KEY argument ("" for
	// every key), for commands whose first argument is a KEY.
	keys    string
	hasKey  bool
	posFile bool // the positional argument is a file (backup FILE)
	posWord []string
	// dashdash: the words after "--" are a command (mcp proxy).
	dashdash bool
}

// flagSpec is one flag: its name, the usage's first clause, whether it
// takes a value, and the values (or files) that complete it.
type flagSpec struct {
	name, usage string
	value       bool
	file        bool
	choices     []string
}

// fileFlags are the flags whose value is a path.
var fileFlags = []string{"db", "body-file", "payload-json", "key", "witness", "from", "write"}

// flagChoices are the values a flag accepts, where they are a short list.
func flagChoices(name string) []string {
	switch name {
	case "outcome":
		return []string{"succeeded", "failed", "unknown"}
	case "mode":
		return []string{"auto", "approval", "deny"}
	case "result":
		return []string{string(ledger.ResultExecuted), string(ledger.ResultNotExecuted)}
	case "state":
		var out []string
		for _, s := range ledger.States() {
			out = append(out, string(s))
		}
		return append(out, "fenced", "conflict")
	case "client":
		return mcpClientNames()
	}
	return nil
}

// keyStates is the state whose keys a command's KEY argument completes.
var keyStates = map[string]string{"approve": "pending", "reject": "pending", "reconcile": "uncertain", "report": "executing"}

// globalFlags are the flags before the command word.
func globalFlags() []flagSpec {
	return []flagSpec{
		{name: "db", usage: "ledger file or postgres:// URL", value: true, file: true},
		{name: "retry-for", usage: "how long to ride out a transient fault", value: true},
		{name: "attempt-timeout", usage: "how long one attempt may wait for the database", value: true},
		{name: "help", usage: "show help"},
	}
}

// commandSpecs lists every command in the top usage's order with the
// flags Main gives it (--db, --json, its own, --help).
func commandSpecs() []cmdSpec {
	cs := commands()
	var out []cmdSpec
	for _, name := range commandOrder {
		cmd := cs[name]
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		commonFlags(fs, new(bool))
		cmd.bind(fs)
		fs.Bool("help", false, "show help")
		s := cmdSpec{name: name, summary: cmd.summary}
		fs.VisitAll(func(f *flag.Flag) {
			fl := flagSpec{name: f.Name, usage: firstClause(f.Usage), file: slices.Contains(fileFlags, f.Name), choices: flagChoices(f.Name)}
			b, isBool := f.Value.(interface{ IsBoolFlag() bool })
			fl.value = !isBool || !b.IsBoolFlag()
			s.flags = append(s.flags, fl)
		})
		args := strings.Fields(cmd.args)
		if len(args) > 0 {
			switch args[0] {
			case "KEY":
				s.hasKey, s.keys = true, keyStates[name]
			case "FILE":
				s.posFile = true
			}
		}
		s.dashdash = strings.Contains(cmd.args, "-- CMD")
		if name == "completion" {
			s.posWord = completionShells
		}
		if name == "agents token" {
			s.posWord = tokenVerbs
		}
		out = append(out, s)
	}
	return out
}

// firstClause shortens a flag's usage to its first clause, for the
// one-line descriptions zsh and fish show.
func firstClause(s string) string {
	if i := strings.IndexAny(s, "(;"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// topWords are the first command words with their descriptions: a
// command, or a group of subcommands (policy, epoch, ...).
func topWords(specs []cmdSpec) (words []string, desc map[string]string, groups map[string][]cmdSpec) {
	desc, groups = map[string]string{}, map[string][]cmdSpec{}
	for _, s := range specs {
		first, _, grouped := strings.Cut(s.name, " ")
		if !slices.Contains(words, first) {
			words = append(words, first)
		}
		if grouped {
			groups[first] = append(groups[first], s)
			desc[first] = subcommands[first]
		} else {
			desc[first] = s.summary
		}
	}
	return words, desc, groups
}

var completionShells = []string{"bash", "zsh", "fish"}

type completionFlags struct{}

func runCompletion(_ context.Context, c *cmdCtx, _ *completionFlags) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("name one shell: tollgate completion bash|zsh|fish")
	}
	specs := commandSpecs()
	switch c.pos[0] {
	case "bash":
		bashCompletion(c.stdout, specs)
	case "zsh":
		zshCompletion(c.stdout, specs)
	case "fish":
		fishCompletion(c.stdout, specs)
	default:
		return 0, usagef("no completion for %q: tollgate completion bash|zsh|fish", c.pos[0])
	}
	return ExitOK, nil
}

func flagNames(fl []flagSpec, valueOnly bool) string {
	var out []string
	for _, f := range fl {
		if !valueOnly || f.value {
			out = append(out, "--"+f.name)
		}
	}
	return strings.Join(out, " ")
}

// groupNames are the words that take a subcommand, for the scripts'
// command walk.
func groupNames(groups map[string][]cmdSpec) string {
	var g []string
	for k := range groups {
		g = append(g, k)
	}
	slices.Sort(g)
	return strings.Join(g, " ")
}

// keysBash and keysZsh list keys from the ledger (the command line's
// --db, else the default), at most 200, in one state or all.
const keysBash = `  command -v tollgate >/dev/null || return 0
  local -a args=(list --json --limit 200)
  [[ -n $1 ]] && args+=(--state "$1")
  [[ -n $2 ]] && args=(--db "$2" "${args[@]}")
  command tollgate "${args[@]}" 2>/dev/null | grep -o '"key":"[^"]*"' | cut -d'"' -f4`

const keysZsh = `  (( $+commands[tollgate] )) || return 1
  local -a args keys
  args=(list --json --limit 200)
  [[ -n $1 ]] && args+=(--state "$1")
  [[ -n $2 ]] && args=(--db "$2" $args)
  keys=(${(f)"$(command tollgate $args 2>/dev/null | grep -o '"key":"[^"]*"' | cut -d'"' -f4)"})
  compadd -a keys`

func bashCompletion(w io.Writer, specs []cmdSpec) {
	words, _, groups := topWords(specs)
	fmt.Fprintf(w, `# bash completion for tollgate, generated by 'tollgate completion bash'.
# Load it in this shell or from ~/.bashrc with:
#   source <(tollgate completion bash)

_tollgate_keys() {
%s
}

# _tollgate_flags CMD [value]: CMD's flags, or only those taking a value.
_tollgate_flags() {
  case "$1/$2" in
`, keysBash)
	fmt.Fprintf(w, "    /) echo %q ;;\n    /value) echo %q ;;\n", flagNames(globalFlags(), false), flagNames(globalFlags(), true))
	for _, s := range specs {
		fmt.Fprintf(w, "    %q/) echo %q ;;\n    %q/value) echo %q ;;\n", s.name, flagNames(s.flags, false), s.name, flagNames(s.flags, true))
	}
	fmt.Fprintf(w, `  esac
}

_tollgate_reply() {
  local cur=$1; shift
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$*" -- "$cur"))
}

_tollgate() {
  local line=${COMP_LINE:0:COMP_POINT} cur="" cmd="" db="" prev="" dashdash=0 npos=0 i x f
  local -a w
  read -ra w <<<"$line"
  case $line in
    *[[:space:]]) ;;
    *) cur=${w[${#w[@]}-1]}; unset "w[${#w[@]}-1]" ;;
  esac
  local n=${#w[@]}
  for ((i = 1; i < n; i++)); do
    x=${w[i]}
    if ((dashdash)); then npos=$((npos + 1)); continue; fi
    f=${x#-}; f=${f#-}
    case $x in
      --) dashdash=1 ;;
      -db | --db) i=$((i + 1)); db=${w[i]} ;;
      -*=*) ;;
      -*)
        case " $(_tollgate_flags "$cmd" value) " in
          *" --$f "*) i=$((i + 1)) ;;
        esac ;;
      *)
        if [[ -z $cmd ]]; then cmd=$x
        elif [[ $cmd != *" "* && " %s " == *" $cmd "* ]]; then cmd="$cmd $x"
        else npos=$((npos + 1)); fi ;;
    esac
  done
  ((n > 1)) && prev=${w[n-1]}
  f=${prev#-}; f=${f#-}
  COMPREPLY=()
  if ((dashdash)); then
    if ((npos == 0)); then COMPREPLY=($(compgen -c -- "$cur")); else compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); fi
    return 0
  fi
  if [[ $prev == -* && " $(_tollgate_flags "$cmd" value) " == *" --$f "* ]]; then
    case $f in
`, groupNames(groups))
	// Value completion, by flag name.
	done := map[string]bool{}
	for _, s := range append([]cmdSpec{{flags: globalFlags()}}, specs...) {
		for _, f := range s.flags {
			if done[f.name] || (!f.file && f.choices == nil) {
				continue
			}
			done[f.name] = true
			switch {
			case f.file:
				fmt.Fprintf(w, "      %s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n", f.name)
			default:
				fmt.Fprintf(w, "      %s) _tollgate_reply \"$cur\" %s ;;\n", f.name, strings.Join(f.choices, " "))
			}
		}
	}
	fmt.Fprintf(w, `    esac
    return 0
  fi
  if [[ $cur == -* ]]; then
    _tollgate_reply "$cur" $(_tollgate_flags "$cmd")
    return 0
  fi
  case $cmd in
    "") _tollgate_reply "$cur" %s ;;
`, strings.Join(words, " "))
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		var subs []string
		for _, s := range groups[g] {
			subs = append(subs, strings.TrimPrefix(s.name, g+" "))
		}
		fmt.Fprintf(w, "    %s) _tollgate_reply \"$cur\" %s ;;\n", g, strings.Join(subs, " "))
	}
	for _, s := range specs {
		switch {
		case s.hasKey:
			fmt.Fprintf(w, "    %q) ((npos == 0)) && _tollgate_reply \"$cur\" $(_tollgate_keys %q \"$db\") ;;\n", s.name, s.keys)
		case s.posFile:
			fmt.Fprintf(w, "    %q) ((npos == 0)) && { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); } ;;\n", s.name)
		case s.posWord != nil:
			fmt.Fprintf(w, "    %q) ((npos == 0)) && _tollgate_reply \"$cur\" %s ;;\n", s.name, strings.Join(s.posWord, " "))
		}
	}
	fmt.Fprint(w, `  esac
  # A key holds colons, which bash splits words at: answer for the part
  # after the last one.
  if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
    local k
    for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]=${COMPREPLY[k]#"${cur%"${cur##*:}"}"}; done
  fi
  return 0
}

complete -F _tollgate tollgate
`)
}

// zshQuote escapes s for a single-quoted word; zshBracket also escapes
// the brackets that end an _arguments option's description.
func zshQuote(s string) string { return strings.ReplaceAll(s, "'", `'\''`) }

func zshBracket(s string) string {
	return zshQuote(strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s))
}

func zshFlagSpecs(fl []flagSpec) string {
	var out []string
	for _, f := range fl {
		spec := "'--" + f.name + "[" + zshBracket(f.usage) + "]"
		switch {
		case f.file:
			spec += ":" + f.name + ":_files"
		case f.choices != nil:
			spec += ":" + f.name + ":(" + strings.Join(f.choices, " ") + ")"
		case f.value:
			spec += ":" + f.name + ": "
		}
		out = append(out, spec+"'")
	}
	return strings.Join(out, " \\\n        ")
}

func zshCompletion(w io.Writer, specs []cmdSpec) {
	words, desc, groups := topWords(specs)
	fmt.Fprintf(w, `#compdef tollgate
# zsh completion for tollgate, generated by 'tollgate completion zsh'.
# Load it with: source <(tollgate completion zsh)  (after compinit), or
# save it as _tollgate in a folder on $fpath.

_tollgate_keys() {
%s
}

_tollgate_describe() {
  local tag=$1; shift
  local -a items; items=("$@")
  _describe -t $tag "tollgate $tag" items
}

_tollgate() {
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  _arguments -C \
        %s \
        '1:command:->command' \
        '*::argument:->argument' && ret=0
  case $state in
    command)
      _tollgate_describe commands`, keysZsh, zshFlagSpecs(globalFlags()))
	for _, word := range words {
		fmt.Fprintf(w, " \\\n        '%s:%s'", word, zshQuote(desc[word]))
	}
	fmt.Fprint(w, ` && ret=0
      return ret ;;
  esac
  local cmd=$words[1] db=${opt_args[--db]}
  case $cmd in
`)
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		fmt.Fprintf(w, "    %s)\n      if (( CURRENT == 2 )); then\n        _tollgate_describe subcommands", g)
		for _, s := range groups[g] {
			fmt.Fprintf(w, " '%s:%s'", strings.TrimPrefix(s.name, g+" "), zshQuote(s.summary))
		}
		fmt.Fprint(w, "\n        return\n      fi\n      cmd=\"$cmd $words[2]\"; shift words; (( CURRENT-- )) ;;\n")
	}
	fmt.Fprint(w, "  esac\n  case $cmd in\n")
	for _, s := range specs {
		pos := ""
		switch {
		case s.hasKey:
			pos = fmt.Sprintf(" \\\n        '1:key:{_tollgate_keys %q \"$db\"}'", s.keys)
		case s.posFile:
			pos = " \\\n        '1:file:_files'"
		case s.posWord != nil:
			pos = " \\\n        '1:shell:(" + strings.Join(s.posWord, " ") + ")'"
		case s.dashdash:
			pos = " \\\n        '*::command:_normal'"
		}
		fmt.Fprintf(w, "    %q)\n      _arguments \\\n        %s%s && ret=0 ;;\n", s.name, zshFlagSpecs(s.flags), pos)
	}
	fmt.Fprint(w, `  esac
  return ret
}

if [ "$funcstack[1]" = "_tollgate" ]; then
  _tollgate "$@"
else
  compdef _tollgate tollgate
fi
`)
}

// fishQuote single-quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, specs []cmdSpec) {
	words, desc, groups := topWords(specs)
	fmt.Fprintf(w, `# fish completion for tollgate, generated by 'tollgate completion fish'.
# Install it with:
#   tollgate completion fish > ~/.config/fish/completions/tollgate.fish

function __tollgate_value_flags
    switch "$argv[1]"
        case ''
            echo %s
`, flagNames(globalFlags(), true))
	for _, s := range specs {
		fmt.Fprintf(w, "        case %s\n            echo %s\n", fishQuote(s.name), flagNames(s.flags, true))
	}
	fmt.Fprintf(w, `    end
end

# __tollgate_cmd prints the command the line names so far ("" for none,
# "policy set" for a subcommand).
function __tollgate_cmd
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmd
    set -l skip 0
    for x in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $x
            case --
                break
            case '-*'
                if contains -- --(string replace -r '^-+' '' -- $x) (string split ' ' -- (__tollgate_value_flags "$cmd"))
                    set skip 1
                end
            case '*'
                if test -z "$cmd"
                    set cmd $x
                else if not string match -q '* *' -- $cmd; and contains -- $cmd %s
                    set cmd "$cmd $x"
                else
                    break
                end
        end
    end
    echo $cmd
end

function __tollgate_is
    set -l cmd (__tollgate_cmd)
    test "$cmd" = "$argv[1]"
end

# __tollgate_keys STATE: keys from the ledger (the line's --db, else the default).
function __tollgate_keys
    command -q tollgate; or return
    set -l db (string replace -r -f -- '.*--?db[ =](\S+).*' '$1' (commandline -pc))
    set -l args list --json --limit 200
    test -n "$argv[1]"; and set args $args --state $argv[1]
    test -n "$db"; and set args --db $db $args
    command tollgate $args 2>/dev/null | string match -ra '"key":"[^"]*"' | string replace -r '"key":"([^"]*)"' '$1'
end

complete -c tollgate -f
`, groupNames(groups))
	flagLines := func(cond string, fl []flagSpec) {
		for _, f := range fl {
			line := fmt.Sprintf("complete -c tollgate -n %s -l %s -d %s", fishQuote(cond), f.name, fishQuote(f.usage))
			switch {
			case f.file:
				line += " -r -F"
			case f.choices != nil:
				line += " -x -a " + fishQuote(strings.Join(f.choices, " "))
			case f.value:
				line += " -x"
			}
			fmt.Fprintln(w, line)
		}
	}
	flagLines(`__tollgate_is ""`, globalFlags())
	for _, word := range words {
		fmt.Fprintf(w, "complete -c tollgate -n '__tollgate_is \"\"' -a %s -d %s\n", word, fishQuote(desc[word]))
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		for _, s := range groups[g] {
			fmt.Fprintf(w, "complete -c tollgate -n '__tollgate_is %s' -a %s -d %s\n", g, strings.TrimPrefix(s.name, g+" "), fishQuote(s.summary))
		}
	}
	for _, s := range specs {
		cond := "__tollgate_is " + fishQuote(s.name)
		flagLines(cond, s.flags)
		switch {
		case s.hasKey:
			fmt.Fprintf(w, "complete -c tollgate -n %s -a %s\n", fishQuote(cond), fishQuote("(__tollgate_keys "+s.keys+")"))
		case s.posFile:
			fmt.Fprintf(w, "complete -c tollgate -n %s -F\n", fishQuote(cond))
		case s.posWord != nil:
			fmt.Fprintf(w, "complete -c tollgate -n %s -a %s\n", fishQuote(cond), fishQuote(strings.Join(s.posWord, " ")))
		}
	}
}
