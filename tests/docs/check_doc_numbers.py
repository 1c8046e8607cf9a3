#!/usr/bin/env python3
"""The user documents quote no measured figures: measurements live in docs/benchmarks.md only.

README.md, docs/cli.md, docs/design.md and CHANGELOG.md point to docs/benchmarks.md for speed, memory and
accuracy instead of quoting numbers that go stale when the benchmarks are run again. This check finds
every *number followed by a unit of measurement* in their prose (times: s, ms, ns, seconds; ratios: 1.7x,
2x, "3 times"; percentages; throughputs: MB/s, Gbp/s, reads/s; decimal sizes: MB, GB; bits per k-mer)
and fails on each one that the allow-list below does not name.

Not measurements, and so not matched: option values and defaults (`--fpr 1e-4`, k = 31), exit statuses,
binary sizes of the design and the file format (2 MiB, 512 KiB, 64-byte blocks), bases and records
(16,384 records, 1 Gbp host), and anything in code: fenced code blocks and `inline code`. The allow-list
holds the few product constants that carry such a unit (a warning threshold of 1.5x the target, the
sizing margin + 2.5%, the fuzz cap of 60 s per target), each as a pattern of its context, so that the
same figure elsewhere still fails.

Usage: check_doc_numbers.py [REPO_ROOT]   (exit 0 when no document quotes a measured figure)
"""
import os
import re
import sys

DOCUMENTS = ["README.md", "docs/cli.md", "docs/design.md", "CHANGELOG.md"]

NUMBER = r"(?<![\w.^/-])\d+(?:,\d{3})*(?:\.\d+)?"
UNIT = (r"(?:"
        r"\s?(?:[kKMGT]?B|[kMG]?bp|reads|k-mers|bases|records|lookups)/s\b"   # throughput
        r"|\s(?:reads|k-mers|bases|records|lookups) (?:per|a) second\b"
        r"|\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|minutes?|min|hours?)\b"    # time
        r"|(?:x|×)(?![\w])"                                                 # ratio: 1.7x, 2×
        r"|\stimes\b"                                                       # ratio: 2.5 times
        r"|\s?%|\spercent\b"                                                # percentage
        r"|\s?(?:kB|KB|MB|GB|TB)\b"                                         # decimal sizes (measured)
        r"|\s?bits?\s?(?:per|a|/)\s?(?:distinct\s)?(?:k-mer|key|minimizer)s?\b"
        r")")
FIGURE = re.compile(NUMBER + UNIT)

# Product constants that carry a unit of measurement: (pattern of the figure in its context, why).
ALLOWED = [
    (r"(?:1\.5|10)x (?:the|its|their) (?:inputs' )?target",
     "warning and --strict thresholds of the estimated false-positive rate"),
    (r"\+ (?:2\.5|5)% for (?:quotient filters|the others)",
     "the margin that build's first pass adds to its count of distinct k-mers"),
    (r"60 s per target", "the time cap of each fuzz target in scripts/test.sh"),
]
# (a blank in a pattern matches any run of white space, line breaks included)
ALLOWED_RE = [re.compile(p.replace(" ", r"\s+")) for p, _ in ALLOWED]

# The heuristics themselves, checked on every run so that they cannot rot into passing everything.
MUST_FIND = ["took 1.52 s", "6.1x the floor", "about 1.7 times as fast", "99.99% of host reads",
             "410 MB/s a thread", "2.5 Gbp/s", "240069 reads/s", "a 390 MB filter", "2.3 GB table",
             "18.7 bits per k-mer", "30 ns a lookup", "in 40 ms", "a 2x speed-up", "3.2× faster",
             "over 1,286 reads/s", "1.5x the floor", "+ 2.5% more memory", "20 percent less"]
MUST_PASS = ["`--fpr 1e-4`", "k = 31", "exit status 130", "batches of 16,384 records or 2 MiB of bases",
             "the first 512 KiB", "a 64-byte block", "a 1 Gbp host", "4 x cores", "2^30 k-mers",
             "above 1.5x the target", "+ 2.5% for quotient filters", "at most 60 s per target",
             "0x6b73696576652121", "version 0.2.0", "`1.52 s` in code", "x86-64-v3", "-t 2 threads",
             "more than 10x its\n  target"]


def prose(text):
    """The text without fenced code blocks, inline code, HTML comments and link targets, with the
    removed parts blanked (newlines kept) so that line numbers stay right."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", blank, text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", blank, text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", blank, text)
    return text


def figures(text):
    """(line, figure) for every measured figure of text that the allow-list does not name."""
    text = prose(text)
    allowed = [m.span() for r in ALLOWED_RE for m in r.finditer(text)]
    found = []
    for m in FIGURE.finditer(text):
        if any(a <= m.start() and m.end() <= b for a, b in allowed):
            continue
        found.append((text.count("\n", 0, m.start()) + 1, m.group(0).strip()))
    return found


def self_check():
    problems = [f"the check misses the figure in {s!r}" for s in MUST_FIND if not figures(s)]
    problems += [f"the check takes {s!r} for a measured figure ({figures(s)})" for s in MUST_PASS
                 if figures(s)]
    # an allowed phrase allows only its own context
    if not figures("merge warns above 1.5x the target and ran 1.5x faster"):
        problems.append("an allowed phrase hides a figure outside it")
    return problems


def main():
    root = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    problems = self_check()
    for rel in DOCUMENTS:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            problems.append(f"{rel}: missing")
            continue
        with open(path, encoding="utf-8") as f:
            for line, figure in figures(f.read()):
                problems.append(f"{rel}:{line}: quotes the measured figure '{figure}' "
                                "(point to docs/benchmarks.md instead)")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"doc numbers: {len(problems)} problems", file=sys.stderr)
        return 1
    print(f"doc numbers: {len(DOCUMENTS)} documents quote no measured figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
