#!/usr/bin/env python3
"""Every command and long option of ksieve is documented where users look for it.

From the help texts of the executable under test (`ksieve --help`, `ksieve COMMAND --help`) it takes every
command and every long option, and checks that
- docs/cli.md names each command, and each option of a command in that command's section (or in "Common
  options");
- the man page built from the help texts (<build>/ksieve.1) has a section for each command with each of its
  options;
- the bash completion (pipeline/app/completion/ksieve.bash) completes each command (after `ksieve` and after
  `ksieve help`) and, for each command, each of its options.

Usage: test_cli_docs.py KSIEVE_BINARY MAN_PAGE
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI_MD = os.path.join(ROOT, "docs", "cli.md")
COMPLETION = os.path.join(ROOT, "pipeline", "app", "completion", "ksieve.bash")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def help_text(ksieve, *args):
    r = subprocess.run([ksieve, *args, "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{ksieve} {' '.join(args)} --help failed: {r.stderr}")
    return r.stdout


def commands_of(text):
    """The subcommands listed under "Subcommands:" of the main help."""
    section = text.split("Subcommands:", 1)[1]
    return re.findall(r"^  ([a-z][a-z-]*)\s", section, re.M)


def long_options(text):
    """The long options of a command's help (the option lines of its Options: section)."""
    section = text.split("Options:", 1)[1].split("\nExample", 1)[0]
    options = []
    for line in section.splitlines():
        m = re.match(r"^  (?:-\w,)?(--[a-z][a-z0-9-]*)", line)
        if m:
            options.append(m.group(1))
    return options


def mentions(text, option):
    return re.search(re.escape(option) + r"(?![a-z0-9-])", text) is not None


def md_sections(md):
    """{heading: text} of the level-2 sections of docs/cli.md (a section runs to the next level-2 heading)."""
    parts = re.split(r"^## ", md, flags=re.M)
    return {p.split("\n", 1)[0]: p for p in parts[1:]}


def completions(words):
    """What the bash completion offers for the command line `words` (the last word being completed)."""
    script = (f"source {COMPLETION!r}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n_ksieve\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    return set(r.stdout.split())


def main():
    ksieve, man_page = os.path.abspath(sys.argv[1]), sys.argv[2]
    main_help = help_text(ksieve)
    commands = commands_of(main_help)
    check(len(commands) >= 7, f"the main help lists the commands ({commands})")
    md = open(CLI_MD).read()
    sections = md_sections(md)
    common = sections.get("Common options", "")
    man = open(man_page).read() if check(os.path.exists(man_page), f"man page {man_page} built") else ""
    man_sections = {p.split("\n", 1)[0].strip(): p for p in re.split(r"^\.SH ", man, flags=re.M)[1:]}

    # the completion runs `ksieve COMMAND --help` through COMP_WORDS[0]: give it the executable under test
    offered = completions([ksieve, ""])
    offered_help = completions([ksieve, "help", ""])
    for command in commands:
        check(re.search(rf"ksieve {command}\b", md) is not None, f"docs/cli.md names ksieve {command}")
        check(command in offered, f"completion offers {command} after ksieve")
        check(command in offered_help, f"completion offers {command} after ksieve help")
        check(command.upper() in man_sections, f"man page has a section {command.upper()}")
        own = [text for heading, text in sections.items() if re.search(rf"\bksieve\b.*\b{command}\b", heading)]
        check(len(own) >= 1, f"docs/cli.md has a section of ksieve {command}")
        options = long_options(help_text(ksieve, command))
        check("--help" in options, f"{command}: options read from its help")
        from_completion = completions([ksieve, command, "--"])
        for option in options:
            check(any(mentions(t, option) for t in own + [common]),
                  f"docs/cli.md documents {command} {option} (in its section or the common options)")
            check(mentions(man_sections.get(command.upper(), ""), option), f"man page: {command} {option}")
            check(option in from_completion, f"completion offers {option} after ksieve {command}")
    if failures:
        print(f"cli docs: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print(f"cli docs: {len(commands)} commands and their options documented, in the man page and completed")


if __name__ == "__main__":
    main()
