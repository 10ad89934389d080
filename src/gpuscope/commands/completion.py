"""`gpuscope completion bash|zsh|fish`: a shell completion script, made from the parser.

    eval "$(gpuscope completion bash)"                          # ~/.bashrc
    eval "$(gpuscope completion zsh)"                           # ~/.zshrc
    gpuscope completion fish > ~/.config/fish/completions/gpuscope.fish

The script is generated from the argparse parser of this version (every command, option and
choice) and completes on its own: nothing of gpuscope runs while a user presses Tab. Options
that take a file or a folder complete paths; options with choices (`--engine`, `--mode`, ...)
complete those; a command's positional arguments complete paths (traces, run folders).
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

HELP = "print a shell completion script (bash, zsh or fish)"
_PATH_WORDS = ("FILE", "DIR", "PATH", "TRACE", "OUTPUT", "CONFIG", "JSON", "MD", "HTML", "CSV",
               "PARQUET", "PNG", "PERFETTO", "PEAKS", "CATEGORIES")  # fmt: skip
SHELLS = ("bash", "zsh", "fish")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def main(args: argparse.Namespace) -> int:
    # the whole parser, built by the command line that called us (commands sit below cli)
    commands = describe(args._build_parser())
    script = {"bash": bash, "zsh": zsh, "fish": fish}[args.shell](commands)
    print(script, end="")
    return 0


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    help: str
    path: bool = False  # its value is a file or a folder


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]
    words: tuple[str, ...] = ()  # the choices of its positional argument (else: paths)


def describe(parser: argparse.ArgumentParser) -> list[Command]:
    """The top level (name "") and every command, with their options."""
    found = [Command("", parser.description or "", _options(parser))]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                found.append(Command(name, helps.get(name, ""), _options(sub), _words(sub)))
    return found


def _words(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    positional = [a for a in parser._actions if not a.option_strings and a.choices]
    return tuple(str(choice) for action in positional for choice in action.choices or ())


def _options(parser: argparse.ArgumentParser) -> tuple[Option, ...]:
    options = []
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        choices = tuple(str(c) for c in action.choices) if action.choices else ()
        metavar = str(action.metavar or action.dest).upper()
        path = any(word in metavar for word in _PATH_WORDS)
        options.append(Option(tuple(action.option_strings), action.nargs != 0, choices,
                              (action.help or "").split("\n")[0], path))  # fmt: skip
    return tuple(options)


def bash(commands: list[Command]) -> str:
    top, subs = commands[0], commands[1:]
    words = " ".join([c.name for c in subs] + [f for o in top.options for f in o.flags])
    valued = [
        f'    "{c.name} {flag}") COMPREPLY=($(compgen -W {shlex.quote(" ".join(o.choices))} '
        f'-- "$cur")); return;;'
        if o.choices
        else f'    "{c.name} {flag}") COMPREPLY=($(compgen -f -- "$cur")); return;;'
        if o.path
        else f'    "{c.name} {flag}") COMPREPLY=(); return;;'
        for c in subs
        for o in c.options
        if o.takes_value
        for flag in o.flags
    ]
    per_command = [
        f"    {c.name}) opts={shlex.quote(' '.join(f for o in c.options for f in o.flags))}; "
        f"words={shlex.quote(' '.join(c.words))};;"
        for c in subs
    ]
    return _BASH.format(words=shlex.quote(words), valued="\n".join(valued),
                        per_command="\n".join(per_command))  # fmt: skip


_BASH = """# gpuscope completion for bash: eval "$(gpuscope completion bash)"
_gpuscope() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local cmd="" i opts="" words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in -*) ;; *) cmd="${{COMP_WORDS[i]}}"; break;; esac
  done
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W {words} -- "$cur")); return
  fi
  case "$cmd $prev" in
{valued}
  esac
  case "$cmd" in
{per_command}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  elif [[ -n "$words" ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -o bashdefault -F _gpuscope gpuscope
"""


def zsh(commands: list[Command]) -> str:
    """zsh runs the bash function through its bashcompinit layer."""
    return (
        '# gpuscope completion for zsh: eval "$(gpuscope completion zsh)"\n'
        "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"
        + bash(commands).split("\n", 1)[1]
    )


def fish(commands: list[Command]) -> str:
    top, subs = commands[0], commands[1:]
    lines = ["# gpuscope completion for fish: gpuscope completion fish | source",
             "complete -c gpuscope -f"]  # fmt: skip
    for c in subs:
        lines.append(f"complete -c gpuscope -n __fish_use_subcommand -a {c.name} "
                     f"-d {_fish_text(c.help)}")  # fmt: skip
    lines += [_fish_option("__fish_use_subcommand", o) for o in top.options]
    for c in subs:
        when = f"'__fish_seen_subcommand_from {c.name}'"
        what = f"-x -a {shlex.quote(' '.join(c.words))}" if c.words else "-F"
        lines.append(f"complete -c gpuscope -n {when} {what}")
        lines += [_fish_option(when, o) for o in c.options]
    return "\n".join(lines) + "\n"


def _fish_option(when: str, option: Option) -> str:
    parts = [f"complete -c gpuscope -n {when}"]
    for flag in option.flags:
        parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
    if option.choices:
        parts.append(f"-x -a {shlex.quote(' '.join(option.choices))}")
    elif option.takes_value:
        parts.append("-r -F" if option.path else "-x")
    parts.append(f"-d {_fish_text(option.help)}")
    return " ".join(parts)


def _fish_text(text: str) -> str:
    return shlex.quote(text[:80].replace("\n", " "))
