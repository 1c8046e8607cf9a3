#!/usr/bin/env python3
"""Checks check_house.py's rule on Linux-only calls against a small made-up source tree: every name of its
list in the code of a product file outside the portability files is reported (with file and line), the
same names in the portability files and in comments are not, and a tree without them passes.

Usage: test_linux_only_rule.py   (exit 0 when the rule behaves so)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
import check_house  # noqa: E402  (beside this file)


def make_tree(root, straggler_lines):
    for entry in check_house.TOP_LEVEL:
        path = os.path.join(root, entry)
        if "." in os.path.basename(entry) or entry == ".ci/run":
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
        else:
            os.makedirs(path, exist_ok=True)
    os.makedirs(os.path.join(root, "filters/src"), exist_ok=True)
    os.makedirs(os.path.join(root, "pipeline/io/src"), exist_ok=True)
    with open(os.path.join(root, "filters/src/straggler.cpp"), "w") as f:
        f.write("// A product file that calls what only Linux has.\n")
        for line in straggler_lines:
            f.write(line + "\n")
    with open(os.path.join(root, "pipeline/io/src/platform_io.cpp"), "w") as f:
        f.write("// The portability file: it may.\n")
        for line in straggler_lines:
            f.write(line + "\n")


def run(root):
    out = subprocess.run([sys.executable, os.path.join(HERE, "check_house.py"), root], capture_output=True,
                         text=True)
    return out.returncode, out.stdout


def main():
    failures = []
    # each name in a line of code (the rule looks at code with its string literals, without comments)
    code_lines = [f"char const * s{i} = {name};" if name.startswith('"') else f'char const * s{i} = "{name}";'
                  for i, name in enumerate(check_house.LINUX_ONLY)]
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, code_lines)
        status, out = run(root)
        reported = [line for line in out.splitlines() if "Linux-only" in line]
        if status == 0:
            failures.append("a tree with Linux-only calls outside the portability files passed")
        for i, name in enumerate(check_house.LINUX_ONLY):
            line_no = i + 2
            if not any(f"filters/src/straggler.cpp:{line_no}:" in r and name in r for r in reported):
                failures.append(f"{name!r} on line {line_no} of a product file was not reported")
        if any("platform_io.cpp" in r for r in reported):
            failures.append("a portability file was reported")
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, ["// comments may name " + " ".join(check_house.LINUX_ONLY), "int main() { return 0; }"])
        status, out = run(root)
        if any("Linux-only" in line for line in out.splitlines()):
            failures.append("a comment naming Linux-only calls was reported: " + out)
    for f in failures:
        print(f)
    print(f"test_linux_only_rule: {len(check_house.LINUX_ONLY)} names, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
