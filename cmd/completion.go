package cmd

// completion.go is `herald completion bash|zsh|fish`: shell completion
// scripts written from the command table when asked for, so that a command
// (or subcommand) added in its own file is completed without a line here.

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func init() {
	registerCommand(command{name: "completion", synopsis: "completion SHELL", summary: "print the completion script for bash, zsh or fish",
		subcommands: []string{"bash", "zsh", "fish"},
		run:         func(ctx context.Context, e *env, a []string) error { return e.completion(a) }})
}

// completionScripts write each shell's script for the given commands.
var completionScripts = map[string]func(w io.Writer, cs []command){
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

func (e *env) completion(args []string) error {
	fs := e.flags("completion")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: herald completion bash|zsh|fish")
	}
	write, ok := completionScripts[pos[0]]
	if !ok {
		return usagef("herald completion: no script for shell %q (use bash, zsh or fish)", pos[0])
	}
	write(e.stdout, sortedCommands())
	return nil
}

// globalFlags are the flags herald takes before a command.
var globalFlags = []struct{ name, help string }{
	{"--home", "herald home directory"},
	{"--help", "show usage"},
	{"--version", "print the version"},
}

func commandNames(cs []command) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

func bashCompletion(w io.Writer, cs []command) {
	words := commandNames(cs)
	for _, f := range globalFlags {
		words = append(words, f.name)
	}
	fmt.Fprint(w, `# bash completion for herald; load it with: source <(herald completion bash)
_herald() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" at=0 i
    (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
    COMPREPLY=()
    if [[ "$prev" == --home || "$prev" == -home ]]; then
        COMPREPLY=( $(compgen -d -- "$cur") )
        return 0
    fi
    # the command is the first word that is neither a flag nor --home's value
    for (( i = 1; i < COMP_CWORD; i++ )); do
        case "${COMP_WORDS[i]}" in
            --home|-home) (( i++ )) ;;
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; at=$i; break ;;
        esac
    done
    if [[ -z "$cmd" ]]; then
        COMPREPLY=( $(compgen -W `+shellWord(strings.Join(words, " "))+` -- "$cur") )
        return 0
    fi
    (( COMP_CWORD == at + 1 )) || return 0
    local subs=""
    case "$cmd" in
`)
	for _, c := range cs {
		if len(c.subcommands) > 0 {
			fmt.Fprintf(w, "        %s) subs=%s ;;\n", shellWord(c.name), shellWord(strings.Join(c.subcommands, " ")))
		}
	}
	fmt.Fprint(w, `    esac
    [[ -n "$subs" ]] && COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
    return 0
}
complete -o default -F _herald herald
`)
}

// zshItem is one "name:description" entry for _describe, its colons in
// name escaped.
func zshItem(name, desc string) string {
	return shellWord(strings.ReplaceAll(name, ":", `\:`) + ":" + desc)
}

func zshCompletion(w io.Writer, cs []command) {
	fmt.Fprint(w, `#compdef herald
# zsh completion for herald; load it with: source <(herald completion zsh)
# (or save it as _herald in a directory on $fpath)
_herald() {
    local curcontext="$curcontext" state line
    local -a commands subs
    commands=(
`)
	for _, c := range cs {
		fmt.Fprintf(w, "        %s\n", zshItem(c.name, c.summary))
	}
	fmt.Fprint(w, `    )
    _arguments -C \
        '--home=[herald home directory]:directory:_files -/' \
        '(- *)--help[show usage]' \
        '(- *)--version[print the version]' \
        '1: :->command' \
        '*:: :->args'
    case $state in
    command)
        _describe -t commands 'herald command' commands
        ;;
    args)
        (( CURRENT == 2 )) || { _files; return }
        case $words[1] in
`)
	for _, c := range cs {
		if len(c.subcommands) == 0 {
			continue
		}
		items := make([]string, len(c.subcommands))
		for i, s := range c.subcommands {
			items[i] = shellWord(s)
		}
		fmt.Fprintf(w, "        %s) subs=(%s) ;;\n", shellWord(c.name), strings.Join(items, " "))
	}
	fmt.Fprint(w, `        *) _files; return ;;
        esac
        _describe -t subcommands 'subcommand' subs
        ;;
    esac
}
if [[ "${funcstack[1]}" == _herald ]]; then
    _herald "$@"
else
    compdef _herald herald
fi
`)
}

// fishWord quotes s for fish: inside single quotes only \ and ' are
// special.
func fishWord(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, cs []command) {
	fmt.Fprint(w, `# fish completion for herald; load it with: herald completion fish | source

# __herald_words prints the words typed after herald that are neither
# flags nor --home's directory: the command, then its arguments.
function __herald_words
    set -l skip 0
    for t in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case --home -home
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

# __herald_at COMMAND: the next word is COMMAND's subcommand
function __herald_at
    set -l words (__herald_words)
    test (count $words) -eq 1; and test "$words[1]" = "$argv[1]"
end

complete -c herald -l home -r -f -a '(__fish_complete_directories)' -d 'herald home directory'
complete -c herald -l help -d 'show usage'
complete -c herald -l version -d 'print the version'
`)
	for _, c := range cs {
		fmt.Fprintf(w, "complete -c herald -f -n 'test (count (__herald_words)) -eq 0' -a %s -d %s\n", fishWord(c.name), fishWord(c.summary))
	}
	for _, c := range cs {
		if len(c.subcommands) == 0 {
			continue
		}
		fmt.Fprintf(w, "complete -c herald -f -n %s -a %s\n", fishWord("__herald_at "+c.name), fishWord(strings.Join(c.subcommands, " ")))
	}
}
