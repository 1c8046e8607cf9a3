#!/usr/bin/env python3
"""Checks the source tree's house rules: the top-level layout, the include direction between the layers,
an opening comment in every product file, file and function lengths, one CPU-dispatch mechanism (the
kernel families' shape, below), and Linux-only calls only in the portability files.

Kernel families: a wrapper source <family>_<level>.cpp (level: generic, x86_64_v3, x86_64_v4, aarch64_neon)
defines only namespace ksieve::detail::<level> (its entries) and has its family's private header
<family>_kernels.hpp and body <family>_kernels.inc beside it; a *.inc file is included at namespace scope
only (never inside a class, struct, union or function body); the installed headers (include/) declare no
per-level kernel (no namespace or qualification by a level, no name with a level suffix); the dispatch
tables (*_kernel_table) are filled only in the libraries' cpu_dispatch.cpp.

Usage: check_house.py [REPO_ROOT]   (exit 0 when every rule holds; each violation on its own line)

Product files are the .cpp, .hpp, .h and .inc files under filters/ and pipeline/. Function lengths come
from universal-ctags (`ctags`); without it that rule is reported as skipped, not as passed.
"""
import os
import re
import shutil
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
OPENING_LINES = 8
TOP_LEVEL = ["pipeline/io", "pipeline/engine", "pipeline/app", "filters", "tests", "bench", "examples",
             "docs", "CMakeLists.txt", "environment.yml", "README.md", "LICENSE", ".ci/run"]
# layer -> the ksieve/<layer> includes it must not use (lower layers never include upper ones)
FORBIDDEN = {
    "filters": ("io", "engine", "app"),
    "pipeline/io": ("engine", "app"),
    "pipeline/engine": ("app",),
    "pipeline/app": (),
}
TARGET_PATTERNS = [re.compile(p) for p in (r"#\s*pragma\s+GCC\s+target", r"gnu::target",
                                           r"__attribute__\s*\(\(\s*target", r"#\s*pragma\s+clang\s+attribute")]
SUFFIXES = (".cpp", ".hpp", ".h", ".inc")
# Linux-only calls, headers and paths: only the portability files (one per library, each with the fallback
# that macOS builds compile) may name them in code; comments may.
LINUX_ONLY = ("<malloc.h>", "mallopt", "/proc/", '"/proc"', "/sys/fs/cgroup", "MADV_", "madvise",
              "sync_file_range", "fdatasync", "posix_fadvise", "O_DIRECT", "MSG_NOSIGNAL",
              # headers and calls of Linux or glibc that macOS lacks
              "<endian.h>", "<byteswap.h>", "<features.h>", "<linux/", "<sys/sysinfo.h>", "<sys/prctl.h>",
              "<sys/vfs.h>", "<sys/statfs.h>", "<sys/auxv.h>", "getauxval", "sched_getaffinity",
              "malloc_trim", "malloc_usable_size", "mallinfo", "memrchr", "mremap", "posix_fallocate",
              "O_TMPFILE", "MAP_POPULATE", "MAP_HUGETLB", "pipe2(")
PORTABILITY_FILES = {"filters/src/support/platform.cpp", "filters/src/support/platform.hpp", "pipeline/io/src/platform_io.cpp",
                     "pipeline/io/src/platform_io.hpp", "pipeline/app/src/platform_app.cpp",
                     "pipeline/app/src/platform_app.hpp"}
# comments (replaced by their line breaks) and the string and character literals left as they are
CODE_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def product_files(root):
    for layer in FORBIDDEN:
        base = os.path.join(root, layer)
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield layer, os.path.join(dirpath, name)


def opens_with_comment(lines):
    for line in lines[:OPENING_LINES]:
        s = line.strip()
        if s.startswith("//") or s.startswith("/*") or s.startswith("*"):
            return True
    return False


def code_lines(text):
    """The lines of `text` without its comments (string literals kept), numbered as in the file."""
    def blank(m):
        t = m.group(0)
        return t if t[0] in "\"'" else "\n" * t.count("\n")
    return CODE_TOKENS.sub(blank, text).split("\n")


def linux_only_calls(rel, text):
    if rel.replace(os.sep, "/") in PORTABILITY_FILES:
        return []
    found = []
    for i, line in enumerate(code_lines(text), 1):
        names = [name for name in LINUX_ONLY if name in line]
        if names:
            found.append(f"{rel}:{i}: Linux-only {', '.join(names)} outside the portability files "
                         f"(call a function of the layer's platform*.cpp, which has the fallback)")
    return found


def long_functions(root, files):
    ctags = shutil.which("ctags")
    if not ctags:
        return None
    out = subprocess.run([ctags, "--langmap=C++:+.inc", "--kinds-C++=f", "--fields=+ne", "-o", "-"] + files,
                         check=True, capture_output=True, text=True).stdout
    found = []
    for row in out.splitlines():
        cols = row.split("\t")
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "line" in fields and "end" in fields:
            n = int(fields["end"]) - int(fields["line"]) + 1
            if n > MAX_FUNCTION_LINES:
                found.append(f"{os.path.relpath(cols[1], root)}:{fields['line']}: function {cols[0]} has {n} lines")
    return found


KERNEL_LEVELS = ("generic", "x86_64_v3", "x86_64_v4", "aarch64_neon")
WRAPPER = re.compile(r"(\w+)_(" + "|".join(KERNEL_LEVELS) + r")\.cpp$")
INC_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+\.inc)"')
LEVEL_IN_HEADER = [re.compile(p) for p in (
    r"\bnamespace\s+(?:\w+::)*(?:" + "|".join(KERNEL_LEVELS) + r")\b",
    r"\b(?:" + "|".join(KERNEL_LEVELS) + r")::",
    r"\b\w+_(?:v3|v4|avx2|avx512|neon)\s*\(",
    r"\b\w+_kernel_table\b")]
# an object of a *_kernel_table type defined with its entries (not a pointer or a reference to one)
TABLE_FILL = re.compile(r"(?<!struct )(?<!class )\b\w+_kernel_table\s*(?:\{|(?:const\s+)?\w+\s*(?:\[[^\]]*\])?\s*[={])")


def scope_kinds(code):
    """For each line of `code` (comments removed), the kinds of the scopes open at its start: 'namespace',
    'class' (class, struct, union) or 'other' (functions, initializers, enums)."""
    kinds, stack, head = [], [], ""
    for line in code:
        kinds.append(list(stack))
        if line.lstrip().startswith("#"):
            continue
        for ch in line:
            if ch == "{":
                if re.search(r"\bnamespace\b[\w:\s]*$", head) or re.search(r'\bextern\s+"C"\s*$', head):
                    stack.append("namespace")
                elif re.search(r"\b(?:class|struct|union)\b", head) and not re.search(r"\benum\b|[()=]", head):
                    stack.append("class")
                else:
                    stack.append("other")
                head = ""
            elif ch == "}":
                if stack:
                    stack.pop()
                head = ""
            elif ch == ";":
                head = ""
            else:
                head += ch
        head += " "
    return kinds


def kernel_convention(rel, path, text):
    """The kernel families' shape in one product file (see the module's comment)."""
    found = []
    posix = rel.replace(os.sep, "/")
    code = code_lines(text)
    kinds = scope_kinds(code)
    for i, line in enumerate(code, 1):
        m = INC_INCLUDE.match(line)
        if m and any(k != "namespace" for k in kinds[i - 1]):
            found.append(f"{rel}:{i}: {m.group(1)} included inside a class, struct or function body "
                         f"(a kernel body is namespace-scope functions)")
        if "/include/" in posix and any(p.search(line) for p in LEVEL_IN_HEADER):
            found.append(f"{rel}:{i}: a per-level kernel or dispatch table in an installed header "
                         f"(declare it in the family's private <family>_kernels.hpp)")
        if os.path.basename(posix) != "cpu_dispatch.cpp" and TABLE_FILL.search(line):
            found.append(f"{rel}:{i}: a kernel dispatch table filled outside cpu_dispatch.cpp")
    m = WRAPPER.search(os.path.basename(posix))
    if m and "/src/" in posix:
        family, level = m.groups()
        folder = os.path.dirname(path)
        for part in ("_kernels.hpp", "_kernels.inc"):
            if not os.path.exists(os.path.join(folder, family + part)):
                found.append(f"{rel}: kernel wrapper without its family's {family}{part}")
        outside, depth, opened = [], 0, False
        for i, line in enumerate(code, 1):
            if line.lstrip().startswith("#"):
                continue
            if depth == 0:
                n = re.match(r"\s*namespace\s+([\w:]+)\s*\{?\s*$", line)
                if n:
                    if n.group(1) != "ksieve::detail::" + level:
                        found.append(f"{rel}:{i}: kernel wrapper opens namespace {n.group(1)} "
                                     f"(only ksieve::detail::{level})")
                    opened = True
                    depth += line.count("{") - line.count("}")
                    continue
                if line.strip() not in ("", "{"):
                    outside.append(i)
                depth += line.count("{") - line.count("}")
            else:
                depth += line.count("{") - line.count("}")
        if outside:
            found.append(f"{rel}:{outside[0]}: kernel wrapper defines something outside namespace "
                         f"ksieve::detail::{level}")
        if not opened:
            found.append(f"{rel}: kernel wrapper without its namespace ksieve::detail::{level}")
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    problems = []
    for entry in TOP_LEVEL:
        if not os.path.exists(os.path.join(root, entry)):
            problems.append(f"layout: {entry} is missing")
    files = []
    for layer, path in product_files(root):
        rel = os.path.relpath(path, root)
        files.append(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
        problems += linux_only_calls(rel, text)
        problems += kernel_convention(rel, path, text)
        if len(lines) > MAX_FILE_LINES:
            problems.append(f"{rel}: {len(lines)} lines (at most {MAX_FILE_LINES})")
        if not opens_with_comment(lines):
            problems.append(f"{rel}: no comment in its first {OPENING_LINES} lines saying what it holds")
        for i, line in enumerate(lines, 1):
            m = re.match(r'\s*#\s*include\s*[<"]ksieve/(\w+)/', line)
            if m and m.group(1) in FORBIDDEN[layer]:
                problems.append(f"{rel}:{i}: {layer} includes ksieve/{m.group(1)} (an upper layer)")
            if any(p.search(line) for p in TARGET_PATTERNS):
                problems.append(f"{rel}:{i}: per-function CPU target (use the per-source CPU levels)")
    longs = long_functions(root, files)
    if longs is None:
        print("check_house: ctags not found: function lengths not checked")
    else:
        problems += longs
    for p in problems:
        print(p)
    print(f"check_house: {len(files)} product files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
