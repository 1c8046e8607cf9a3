#!/usr/bin/env python3
"""Every link of the Markdown documents to a file of the repository leads somewhere.

In README.md, docs/*.md and examples/**/README.md it takes every link outside code (inline `[text](target)`,
images, reference definitions `[label]: target`, and the `href`/`src` of HTML tags) whose target is not a
URL, and checks that
- the file or directory it names exists (relative to the document, or to the repository root for `/path`);
- its `#anchor` (of the same document, or of `other.md#anchor`) is a heading of that document under
  GitHub's rules: the heading's text as rendered (code marks, emphasis and link targets dropped), lower
  case, every character other than a letter, digit, blank, '-' or '_' removed, each blank made a '-', and
  the second, third ... heading of one anchor given -1, -2 ...; an `<a id>` or `<a name>` counts too. An
  anchor into a file that is not Markdown must be a line anchor (`#L10`, `#L10-L20`).
It also reports prose that names a section of another document instead of linking to it: a file name
followed by a quoted heading or a section number (`benchmarks.md, "Combining samples"`, `file_format.md,
4.2`) or "the section X of file.md". Such a reference should be a link to the heading's anchor.

The rules are checked on small examples on every run, so that they cannot rot into passing everything.

Usage: check_links.py [REPO_ROOT]   (exit 0 when every link and section reference is sound)
"""
import glob
import os
import re
import sys
from urllib.parse import unquote

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_TARGET = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)=\"([^\"]+)\"", re.I)
ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L\d+(?:-L\d+)?$")
MD_NAME = r"(?:\]\([^)\s]*?\.md\)|(?<![\w/.-])[\w./-]+\.md\b)"
PROSE_REFERENCES = [
    (re.compile(MD_NAME + r",?\s+\"[^\"]+\""), "a quoted heading after a file name"),
    (re.compile(MD_NAME + r",?\s+(?:section\s+)?\d+(?:\.\d+)*[a-z]?\b"), "a section number after a file name"),
    (re.compile(r"\bsections?\s+(?:\"[^\"]+\"|[A-Z][^,.;:()]*?)\s+(?:of|in)\s+" + MD_NAME), "a section of a file"),
]


def documents(root):
    found = [os.path.join(root, "README.md")]
    found += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    found += sorted(glob.glob(os.path.join(root, "examples", "**", "README.md"), recursive=True))
    return [f for f in found if os.path.isfile(f)]


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            fence = None if fence == m.group(1) else fence or m.group(1)
            continue
        if fence is None:
            yield number, line


def without_code(line):
    return re.sub(r"(`+)(?:(?!\1).)+\1", "", line)


def rendered(text):
    """A heading's text as GitHub renders it: code marks, images, link targets, HTML tags and emphasis
    markers gone."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(`+)((?:(?!\1).)+)\1", r"\2", text)
    text = re.sub(r"(\*{1,3}|(?<!\w)_{1,3})(\S(?:.*?\S)?)\1(?!\w)", r"\2", text)
    return text.strip()


def slug(heading):
    """GitHub's anchor of a heading (without the -1, -2 of duplicates)."""
    return re.sub(r"[^\w\- ]", "", rendered(heading).lower()).replace(" ", "-")


def anchors_of(text):
    """Every anchor a Markdown document defines: its headings' (duplicates numbered) and its HTML ids."""
    anchors, seen = set(), {}
    previous = ""
    for _, line in prose_lines(text):
        m = ATX.match(line)
        setext = re.match(r"^\s{0,3}(=+|-+)\s*$", line) and previous.strip() and \
            not re.match(r"^\s*([#>|*+-]|\d+[.)])", previous) and not ATX.match(previous)
        heading = m.group(2) if m else previous.strip() if setext else None
        if heading is not None:
            base = slug(heading)
            n = seen.get(base, 0)
            anchors.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        anchors.update(HTML_ANCHOR.findall(line))
        previous = "" if setext else line
    return anchors


def links_of(text):
    """(line number, target) of every link outside code."""
    for number, line in prose_lines(text):
        line = without_code(line)
        m = REFERENCE_DEF.match(line)
        if m:
            yield number, m.group(1)
            continue
        for m in INLINE_LINK.finditer(line):
            yield number, m.group(2)
        for target in HTML_TARGET.findall(line):
            yield number, target


def link_problem(root, doc, target, anchor_cache):
    """What is wrong with a link of DOC to TARGET (None when it is sound)."""
    if URL.match(target) or target.startswith("//"):
        return None
    path, _, anchor = target.partition("#")
    path = unquote(path)
    if path:
        file = os.path.normpath(os.path.join(root, path.lstrip("/")) if path.startswith("/")
                                else os.path.join(os.path.dirname(doc), path))
        if not os.path.exists(file):
            return f"'{target}': no file {os.path.relpath(file, root)}"
    else:
        file = doc
    if not anchor:
        return None
    if not file.endswith(".md"):
        return None if LINE_ANCHOR.match(anchor) else f"'{target}': an anchor into a file that is not Markdown"
    if file not in anchor_cache:
        anchor_cache[file] = anchors_of(open(file, encoding="utf-8").read())
    if unquote(anchor) not in anchor_cache[file]:
        return f"'{target}': no heading of {os.path.relpath(file, root)} has the anchor #{anchor}"
    return None


def prose_references(text):
    """(line number, matched text, kind) of the section references of TEXT that are not links. A
    reference may run over a line break: each line is read with the start of the next."""
    lines = list(prose_lines(text))
    found = []
    for i, (number, line) in enumerate(lines):
        joined = without_code(line)
        if i + 1 < len(lines) and lines[i + 1][0] == number + 1:
            joined += " " + without_code(lines[i + 1][1])
        joined = INLINE_LINK.sub(lambda m: m.group(0) if m.group(2).endswith(".md") else "LINK", joined)
        for pattern, kind in PROSE_REFERENCES:
            for m in pattern.finditer(joined):
                if m.start() < len(without_code(line)):
                    found.append((number, m.group(0), kind))
    return found


def check_document(root, doc, anchor_cache):
    text = open(doc, encoding="utf-8").read()
    rel = os.path.relpath(doc, root)
    problems = []
    for number, target in links_of(text):
        p = link_problem(root, doc, target, anchor_cache)
        if p:
            problems.append(f"{rel}:{number}: {p}")
    for number, matched, kind in prose_references(text):
        problems.append(f"{rel}:{number}: {kind} names a section without linking to it: '{matched}' "
                        "(link to its anchor instead)")
    return problems


def self_test():
    """The rules on examples, each with what GitHub makes of it."""
    slugs = {"Per-read report (`--report`)": "per-read-report---report",
             "2.4a Label table (version 5)": "24a-label-table-version-5",
             "4.2 Hash `mix2k_v1` (hash id 1)": "42-hash-mix2k_v1-hash-id-1",
             "Host depletion: a 1 Gbp host, 2 M reads": "host-depletion-a-1-gbp-host-2-m-reads",
             "ksieve merge, intersect, subtract": "ksieve-merge-intersect-subtract",
             "**Bold** and *emphasis* [link](x.md)": "bold-and-emphasis-link",
             "Why the defaults?": "why-the-defaults"}
    bad = [f"slug of '{h}' is '{slug(h)}', not '{s}'" for h, s in slugs.items() if slug(h) != s]
    anchors = anchors_of("# A\n## Notes\n```\n# not a heading\n```\n### Notes\nSet\n---\n<a id=\"x\"></a>\n")
    if anchors != {"a", "notes", "notes-1", "set", "x"}:
        bad.append(f"anchors of the example: {sorted(anchors)}")
    links = [t for _, t in links_of("[a](b.md#c) `[no](code.md)` ![i](p.png)\n[ref]: d.md\n```\n[x](y.md)\n```\n")]
    if links != ["b.md#c", "p.png", "d.md"]:
        bad.append(f"links of the example: {links}")
    must_find = ['see benchmarks.md, "Combining samples".', "in [file_format.md](file_format.md), 4.2.",
                 "see the section Known limitations of design.md", "(file_format.md, 2.4a)",
                 '[benchmarks.md](benchmarks.md), "Deduplication\nand normalization"']
    must_pass = ['[design.md, "Known limitations"](design.md#known-limitations)',
                 "[Combining samples](benchmarks.md#combining-samples)", "`file_format.md, 4.2`",
                 "benchmarks.md (every table) and design.md, where"]
    for t in must_find:
        if not prose_references(t):
            bad.append(f"no section reference found in: {t!r}")
    for t in must_pass:
        if prose_references(t):
            bad.append(f"a section reference found in: {t!r}")
    return bad


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    problems = [f"check_links.py itself: {p}" for p in self_test()]
    cache = {}
    docs = documents(root)
    for doc in docs:
        problems += check_document(root, doc, cache)
    for p in problems:
        print(p)
    if problems:
        print(f"links: {len(problems)} problems", file=sys.stderr)
        return 1
    print(f"links: every link and section reference of {len(docs)} documents is sound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
