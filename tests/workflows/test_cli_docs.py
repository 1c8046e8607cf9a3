#!/usr/bin/env python3
"""Every command and option of ksieve is documented where users look for it, and says the same there.

From the help texts of the executable under test (`ksieve --help`, `ksieve COMMAND --help`) it takes every
command and every option (its names, its default, the older names its description gives), and checks that
- docs/cli.md names each command, and each option of a command in that command's section (or in "Common
  options");
- the option tables of docs/cli.md agree with the help: a row names every name of its option (`-o`,
  `--output`) and no name the command lacks, states the default the help prints (CLI11's `=VALUE`, or the
  "default: ..." of the description; parenthesized asides aside; "required" for a required option, "off" or nothing for a flag,
  nothing or "not written" for an option without a default) and the same older names ("--shard I/S: its
  older name"), and each older name still does what the option does (the same filter file);
- the man page built from the help texts (<build>/ksieve.1) has a section for each command with each of its
  options, names and defaults as in the help;
- the bash completion (pipeline/app/completion/ksieve.bash) completes each command (after `ksieve` and after
  `ksieve help`) and, for each command, each of its options and short flags.
The comparison is then run on copies of docs/cli.md with a disagreement planted (a default, a short flag, an
older name changed), each of which it must report.

Usage: test_cli_docs.py KSIEVE_BINARY MAN_PAGE
"""
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI_MD = os.path.join(ROOT, "docs", "cli.md")
COMPLETION = os.path.join(ROOT, "pipeline", "app", "completion", "ksieve.bash")
HELP_COLUMN = 30  # CLI11's width of the names column
# an example value for each (command, option) that has an older name, to run both names with
OLDER_NAME_VALUES = {("build", "--part"): "1/4"}
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


# ---------------------------------------------------------------------------------------------------------
# The help texts
# ---------------------------------------------------------------------------------------------------------
def description_default(description):
    """The "default: X" (or "default X") of a description, up to the ';' or ')' that ends its clause,
    without the parenthesized asides inside it; None when it names none."""
    m = re.search(r"\bdefault:?\s+", description)
    if not m:
        return None
    depth, end = 0, len(description)
    for i in range(m.end(), len(description)):
        c = description[i]
        if c == "(":
            depth += 1
        elif c == ")" and depth == 0 or c == ";" and depth == 0:
            end = i
            break
        elif c == ")":
            depth -= 1
    return re.sub(r"\s*\([^()]*\)", "", description[m.end():end]).strip()


def older_names(text):
    """The older names a description or a table cell gives: "--shard I/S: its older name",
    "`--shard I/S` is its older name"."""
    return {m.group(1) for m in re.finditer(r"(--[a-z][a-z0-9-]*)[^;,()]*?\bits older name", text)}


def parse_option(name_column, description):
    names_text, _, rest = name_column.partition(" ")
    names = re.sub(r"\{.*\}$", "", names_text).split(",")
    required = rest.endswith(" REQUIRED") or rest == "REQUIRED"
    rest = re.sub(r"\s*REQUIRED$", "", rest)
    rest = re.sub(r"\s*\.\.\.$", "", rest)
    flag = rest == ""
    default = rest.split("=", 1)[1] if "=" in rest else None
    if default is None and not flag:
        default = description_default(description)
    return {"names": names, "long": next((n for n in names if n.startswith("--")), names[0]),
            "default": default, "required": required, "flag": flag, "description": description,
            "older": older_names(description)}


def help_options(text):
    """The options of a command's help, in order: {long name: option}."""
    lines = text.split("Options:", 1)[1].split("\nExample", 1)[0].splitlines()
    options = {}
    for i, line in enumerate(lines):
        if not re.match(r"^  -", line):
            continue
        continued = i + 1 < len(lines) and re.match(r"^ {%d}\S" % HELP_COLUMN, lines[i + 1])
        if continued:
            name_column, description = line.strip(), lines[i + 1].strip()
        else:
            name_column, description = line[2:HELP_COLUMN].strip(), line[HELP_COLUMN:].strip()
        option = parse_option(name_column, description)
        options[option["long"]] = option
    return options


def mentions(text, option):
    return re.search(re.escape(option) + r"(?![a-z0-9-])", text) is not None


# ---------------------------------------------------------------------------------------------------------
# docs/cli.md
# ---------------------------------------------------------------------------------------------------------
def md_sections(md):
    """{heading: text} of the level-2 sections of docs/cli.md (a section runs to the next level-2 heading)."""
    parts = re.split(r"^## ", md, flags=re.M)
    return {p.split("\n", 1)[0]: p for p in parts[1:]}


def table_cells(line):
    """The cells of a Markdown table row ('|' inside `code` does not split)."""
    cells, cell, code = [], "", False
    for c in line.strip()[1:]:
        if c == "`":
            code = not code
        if c == "|" and not code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += c
    return cells


def option_rows(section):
    """The rows of the option tables of a section: [(names, default cell, meaning cell)]."""
    rows, in_table = [], False
    for line in section.splitlines():
        if re.match(r"^\| option \| argument \| default \| meaning \|", line):
            in_table = True
            continue
        if in_table and line.startswith("|"):
            cells = table_cells(line)
            if set(cells[0]) <= set("-: "):
                continue
            names = re.findall(r"`(--?[a-zA-Z][a-z0-9-]*)`", cells[0])
            rows.append((names, cells[2], cells[3]))
        else:
            in_table = False
    return rows


def normal(text):
    """A default as compared: without its parenthesized asides and code marks, one blank between words,
    lower case, no final period."""
    text = text.replace("`", "")
    while True:
        shorter = re.sub(r"\s*\([^()]*\)", "", text)
        if shorter == text:
            break
        text = shorter
    return re.sub(r"\s+", " ", text).strip().rstrip(".").lower()


def compare_default(where, option, cell):
    """The default a table row states against the help's."""
    doc = normal(cell)
    if option["required"]:
        check(doc == "required", f"{where}: the help says required, docs/cli.md says '{cell}'")
    elif option["flag"]:
        check(doc in ("", "off"), f"{where}: a flag (off unless given), docs/cli.md says '{cell}'")
    elif option["default"] is None:
        check(doc in ("", "not written"),
              f"{where}: the help states no default, docs/cli.md states '{cell}' (say it in the help too)")
    else:
        check(doc == normal(option["default"]),
              f"{where}: default '{option['default']}' in the help, '{cell}' in docs/cli.md")
    if doc == "required":
        check(option["required"], f"{where}: docs/cli.md says required, the help does not")


def rows_of_command(sections, command):
    """The table rows that document COMMAND's options, in the order they are looked up: its own section,
    for dedup the options it takes from build and classify (as its section lists them), then Common
    options."""
    own = [option_rows(text) for heading, text in sections.items()
           if re.search(rf"\bksieve\b.*\b{command}\b", heading)]
    rows = [r for table in own for r in table]
    if command == "dedup":
        text = next(t for h, t in sections.items() if h == "ksieve dedup")
        taken = re.search(r"dedup takes (.*?)with these differences", text, re.S)
        named = set(re.findall(r"`(--?[a-zA-Z][a-z0-9-]*)`", taken.group(1))) if taken else set()
        check(bool(named), "docs/cli.md: the dedup section lists the options it takes from build and classify")
        for other in ("ksieve build", "ksieve classify"):
            rows += [(n, d, m) for n, d, m in option_rows(sections.get(other, "")) if set(n) & named]
    return rows + option_rows(sections.get("Common options", ""))


def compare_command(sections, command, options):
    """The option tables of COMMAND against its help options."""
    rows = rows_of_command(sections, command)
    known = {n for o in options.values() for n in o["names"]}
    own = [r for heading, text in sections.items() if re.search(rf"\bksieve\b.*\b{command}\b", heading)
           for r in option_rows(text)]
    combined = [c for c in re.findall(r"\b(merge|intersect|subtract)\b", next(
        (h for h in sections if re.search(rf"\bksieve\b.*\b{command}\b", h)), ""))]
    for names, _, meaning in own:
        for n in names:
            only = re.match(r"(\w+) only\b", meaning)
            if only and only.group(1) != command and only.group(1) in combined:
                continue
            check(n in known, f"docs/cli.md names {command} {n}, which `ksieve {command} --help` does not")
    for long_name, option in options.items():
        row = next((r for r in rows if long_name in r[0]), None)
        if not check(row is not None, f"docs/cli.md has a table row of {command} {long_name}"):
            continue
        names, cell, meaning = row
        where = f"{command} {long_name}"
        for n in option["names"]:
            check(n in names, f"{where}: the help names it also {n}, docs/cli.md's row does not")
        check(older_names(meaning) == option["older"],
              f"{where}: older names {sorted(option['older'])} in the help, "
              f"{sorted(older_names(meaning))} in docs/cli.md")
        compare_default(where, option, cell)


# ---------------------------------------------------------------------------------------------------------
# The man page, the completion and the older names
# ---------------------------------------------------------------------------------------------------------
def man_sections_of(man):
    """{TITLE: the help text in it} of the man page (its escapes undone)."""
    out = {}
    for part in re.split(r"^\.SH ", man, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        body = re.sub(r"^\\&", "", body, flags=re.M).replace("\\e", "\\")
        out[title.strip()] = re.sub(r"^\.(nf|fi)\s*$", "", body, flags=re.M)
    return out


def completions(words):
    """What the bash completion offers for the command line `words` (the last word being completed)."""
    script = (f"source {COMPLETION!r}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n_ksieve\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    return set(r.stdout.split())


def check_older_names(ksieve, command, option):
    """Each older name of an option builds the same filter file as the option itself."""
    if not option["older"]:
        return
    value = OLDER_NAME_VALUES.get((command, option["long"]))
    if not check(value is not None, f"{command} {option['long']}: an example value to run its older names "
                                    "with (OLDER_NAME_VALUES)"):
        return
    with tempfile.TemporaryDirectory() as d:
        fasta = os.path.join(d, "ref.fa")
        rng = random.Random(7)
        with open(fasta, "w") as f:
            f.write(">r\n" + "".join(rng.choice("ACGT") for _ in range(5000)) + "\n")
        outputs = []
        for name in [option["long"], *sorted(option["older"])]:
            out = os.path.join(d, name.strip("-") + ".ksf")
            r = subprocess.run([ksieve, command, "-q", name, value, "-o", out, fasta], capture_output=True,
                               text=True)
            check(r.returncode == 0, f"ksieve {command} {name} {value} runs ({r.stderr.strip()})")
            outputs.append(open(out, "rb").read() if os.path.exists(out) else b"")
        check(all(o == outputs[0] for o in outputs),
              f"{command}: {option['long']} and its older names {sorted(option['older'])} make the same file")


def check_command(ksieve, command, helps, md, sections, man_sections):
    own = [text for heading, text in sections.items() if re.search(rf"\bksieve\b.*\b{command}\b", heading)]
    check(len(own) >= 1, f"docs/cli.md has a section of ksieve {command}")
    common = sections.get("Common options", "")
    options = help_options(helps[command])
    check("--help" in options, f"{command}: options read from its help")
    check(re.search(rf"ksieve {command}\b", md) is not None, f"docs/cli.md names ksieve {command}")
    man = man_sections.get(command.upper(), "")
    check(bool(man), f"man page has a section {command.upper()}")
    man_options = help_options(man) if "Options:" in man else {}
    from_completion = completions([ksieve, command, "-"])
    for long_name, option in options.items():
        check(any(mentions(t, long_name) for t in own + [common]),
              f"docs/cli.md documents {command} {long_name} (in its section or the common options)")
        check(man_options.get(long_name, {}).get("names") == option["names"] and
              man_options[long_name]["default"] == option["default"],
              f"man page: {command} {long_name} with the names and default of the help")
        for n in option["names"]:
            check(n in from_completion, f"completion offers {n} after ksieve {command}")
        check_older_names(ksieve, command, option)
    compare_command(sections, command, options)


def planted_disagreements_are_found(md, helps, commands):
    """The comparison of the tables with the help reports a disagreement planted in a copy of cli.md."""
    plants = [("build -k default", r"(\| `-k`, `--kmer` \| K \| )31 \|", r"\g<1>32 |"),
              ("classify -f short flag", r"\| `-f`, `--filter` \|", "| `-F`, `--filter` |"),
              ("build --part older name", r"`--shard I/S` is its older name", "`--slice I/S` is its older name"),
              ("dedup --min-hit-fraction default", r"(\| `--min-hit-fraction` \| F \| )0\.5 \|", r"\g<1>0.6 |"),
              ("a required option", r"(\| `-o`, `--output` \| FILE \| )required", r"\g<1>none")]
    global failures
    for what, pattern, replacement in plants:
        planted, n = re.subn(pattern, replacement, md, count=1)
        saved, failures = failures, []
        sys.stderr, stderr = open(os.devnull, "w"), sys.stderr
        try:
            sections = md_sections(planted)
            for command in commands:
                compare_command(sections, command, help_options(helps[command]))
        finally:
            sys.stderr.close()
            sys.stderr = stderr
        found, failures = failures, saved
        check(n == 1 and found, f"a disagreement planted in docs/cli.md ({what}) is reported")


def main():
    ksieve, man_page = os.path.abspath(sys.argv[1]), sys.argv[2]
    main_help = help_text(ksieve)
    commands = commands_of(main_help)
    check(len(commands) >= 7, f"the main help lists the commands ({commands})")
    md = open(CLI_MD).read()
    sections = md_sections(md)
    man = open(man_page).read() if check(os.path.exists(man_page), f"man page {man_page} built") else ""
    man_sections = man_sections_of(man)
    helps = {command: help_text(ksieve, command) for command in commands}

    # the completion runs `ksieve COMMAND --help` through COMP_WORDS[0]: give it the executable under test
    offered = completions([ksieve, ""])
    offered_help = completions([ksieve, "help", ""])
    for command in commands:
        check(command in offered, f"completion offers {command} after ksieve")
        check(command in offered_help, f"completion offers {command} after ksieve help")
        check_command(ksieve, command, helps, md, sections, man_sections)
    planted_disagreements_are_found(md, helps, commands)
    if failures:
        print(f"cli docs: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print(f"cli docs: {len(commands)} commands; their options, names and defaults the same in the help, "
          "docs/cli.md and the man page, and completed")


if __name__ == "__main__":
    main()
