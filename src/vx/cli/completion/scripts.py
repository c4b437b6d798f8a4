"""The bash, zsh and fish completion scripts, rendered from the completion table.

bash and zsh share one shape: small lookup functions generated from the table (a verb's
flags, its space-form value flags, a flag's values, a verb's words) and one driver that finds
the verb, then completes a `--flag=value`, a value after a space-form flag, a flag, or a word.
An optional-value flag takes its value only after `=`, as the parser reads it, so only the
`=` form offers its values. fish states the same table as `complete` rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli.completion.table import TASKS, TASKS_WORD, VERBS_WORD, VerbSpec
from vx.cli.parser import Takes

if TYPE_CHECKING:
    from collections.abc import Sequence


def _words(values: Sequence[str], tasks_call: str) -> str:
    """A lookup's answer: fixed words echoed, the task set fetched at Tab time."""
    fixed = [v for v in values if v != TASKS]
    parts = [f"echo '{' '.join(fixed)}'"] if fixed else []
    if TASKS in values:
        parts.append(tasks_call)
    return "; ".join(parts) or ":"


def _lookups(specs: Sequence[VerbSpec], fn: str) -> list[str]:
    """The four lookup functions bash and zsh both read (`fn` is the declaration syntax)."""
    tasks = "_vx_tasks"
    lines = [fn.format("_vx_flags") + " {", '  case "$1" in']
    lines += [f"    {s.name}) echo '{' '.join(f.name for f in s.flags)}' ;;" for s in specs]
    lines += ["  esac", "}", fn.format("_vx_space_flags") + " {", '  case "$1" in']
    for s in specs:
        spaced = [f.name for f in s.flags if f.takes is Takes.VALUE]
        if spaced:
            lines.append(f"    {s.name}) echo '{' '.join(spaced)}' ;;")
    lines += ["  esac", "}", fn.format("_vx_values") + " {", '  case "$1 $2" in']
    for s in specs:
        for f in s.flags:
            if f.values:
                lines.append(f"    '{s.name} {f.name}') {_words(f.values, tasks)} ;;")
    lines += ["  esac", "}", fn.format("_vx_words") + " {", '  case "$1" in']
    for s in specs:
        if s.words:
            lines.append(f"    {s.name}) {_words(s.words, tasks)} ;;")
    lines += ["  esac", "}"]
    lines += [
        fn.format("_vx_tasks") + " {",
        f'  "${{_vx_cmd:-vx}}" completions {TASKS_WORD} 2>/dev/null',
        "}",
        fn.format("_vx_plugin_verbs") + " {",
        f'  "${{_vx_cmd:-vx}}" completions {VERBS_WORD} 2>/dev/null',
        "}",
    ]
    return lines


def bash(specs: Sequence[VerbSpec]) -> str:
    """The bash script: `eval "$(vx completions bash)"`."""
    verbs = " ".join(s.name for s in specs)
    driver = f"""\
_vx() {{
  local cur prev verb flag i
  _vx_cmd="${{COMP_WORDS[0]}}"
  cur="${{COMP_WORDS[COMP_CWORD]}}"
  prev=""
  if [ "$COMP_CWORD" -gt 0 ]; then prev="${{COMP_WORDS[COMP_CWORD-1]}}"; fi
  verb=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in -* | =) ;; *) verb="${{COMP_WORDS[i]}}"; break ;; esac
  done
  if [ -z "$verb" ]; then
    COMPREPLY=($(compgen -W "{verbs} $(_vx_plugin_verbs) --help --version" -- "$cur"))
    return
  fi
  flag=""
  if [ "$cur" = "=" ]; then
    flag="$prev"; cur=""
  elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 1 ]; then
    flag="${{COMP_WORDS[COMP_CWORD-2]}}"
  elif [[ "$cur" == --*=* ]]; then
    flag="${{cur%%=*}}"; cur="${{cur#*=}}"
    COMPREPLY=($(compgen -P "$flag=" -W "$(_vx_values "$verb" "$flag")" -- "$cur"))
    return
  fi
  if [ -n "$flag" ]; then
    COMPREPLY=($(compgen -W "$(_vx_values "$verb" "$flag")" -- "$cur"))
    return
  fi
  case " $(_vx_space_flags "$verb") " in
    *" $prev "*)
      COMPREPLY=($(compgen -W "$(_vx_values "$verb" "$prev")" -- "$cur"))
      return ;;
  esac
  case "$cur" in
    -*) COMPREPLY=($(compgen -W "$(_vx_flags "$verb")" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$(_vx_words "$verb")" -- "$cur")) ;;
  esac
}}
complete -o default -F _vx vx
"""
    head = ['# vx completions for bash: eval "$(vx completions bash)" (e.g. in ~/.bashrc)']
    return "\n".join([*head, *_lookups(specs, "{}()"), driver])


def zsh(specs: Sequence[VerbSpec]) -> str:
    """The zsh script: from $fpath (as `_vx`) it completes on the first Tab; sourced, it
    registers itself with compdef."""
    verbs = " ".join(s.name for s in specs)
    driver = f"""\
_vx() {{
  local cur="${{words[CURRENT]}}" prev="${{words[CURRENT-1]}}" verb="" flag="" i
  _vx_cmd="${{words[1]}}"
  for ((i = 2; i < CURRENT; i++)); do
    case "${{words[i]}}" in -*) ;; *) verb="${{words[i]}}"; break ;; esac
  done
  if [[ -z $verb ]]; then
    compadd -- {verbs} ${{=$(_vx_plugin_verbs)}} --help --version
    return
  fi
  if [[ $cur == --*=* ]]; then
    flag="${{cur%%=*}}"
    compset -P '*='
    compadd -- ${{=$(_vx_values $verb $flag)}}
    return
  fi
  if [[ " $(_vx_space_flags $verb) " == *" $prev "* ]]; then
    compadd -- ${{=$(_vx_values $verb $prev)}}
    return
  fi
  if [[ $cur == -* ]]; then
    compadd -- ${{=$(_vx_flags $verb)}}
  else
    compadd -- ${{=$(_vx_words $verb)}}
  fi
}}
if [[ "${{funcstack[1]}}" == _vx ]]; then
  _vx "$@"
else
  compdef _vx vx
fi
"""
    head = [
        "#compdef vx",
        "# vx completions for zsh: save as _vx in a directory on $fpath, or source it",
    ]
    return "\n".join([*head, *_lookups(specs, "{}()"), driver])


def fish(specs: Sequence[VerbSpec]) -> str:
    """The fish script: `complete` rules, one per verb, flag and value set."""
    tasks = f"(vx completions {TASKS_WORD} 2>/dev/null)"
    lines = [
        "# vx completions for fish: vx completions fish > ~/.config/fish/completions/vx.fish",
        "complete -c vx -f",
        "complete -c vx -n __fish_use_subcommand -l help -l version",
        f"complete -c vx -n __fish_use_subcommand -a '(vx completions {VERBS_WORD} 2>/dev/null)'",
    ]
    lines += [
        f"complete -c vx -n __fish_use_subcommand -a {s.name} -d {_quote(s.summary)}" for s in specs
    ]
    for s in specs:
        seen = f"__fish_seen_subcommand_from {s.name}"
        for f in s.flags:
            rule = f"complete -c vx -n '{seen}' -l {f.name[2:]}"
            values = " ".join(v for v in f.values if v != TASKS)
            wanted = (f"{values} {tasks}" if TASKS in f.values else values).strip()
            if f.takes is Takes.VALUE:
                rule += f" -x -a {_quote(wanted)}" if wanted else " -x"
            lines.append(rule)
            if f.takes is Takes.OPTIONAL and f.values:
                typed = f'string match -q -- "{f.name}=*" (commandline -ct)'
                forms = " ".join(f"{f.name}={v}" for v in f.values)
                lines.append(f"complete -c vx -n '{seen}; and {typed}' -a {_quote(forms)}")
        if s.words:
            fixed = " ".join(w for w in s.words if w != TASKS)
            wanted = (f"{fixed} {tasks}" if TASKS in s.words else fixed).strip()
            lines.append(f"complete -c vx -n '{seen}' -a {_quote(wanted)}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A fish single-quoted word."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
