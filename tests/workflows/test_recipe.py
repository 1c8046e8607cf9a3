#!/usr/bin/env python3
"""The conda recipe builds and passes its own tests, as conda-build would run them (without conda).

1. The source tree (the files git tracks or would track: no build directories) is copied to a temporary
   SRC_DIR, as conda-build checks the source out into its work directory.
2. recipes/ksieve/build.sh runs there with the variables conda-build sets (PREFIX, SRC_DIR, RECIPE_DIR,
   CPU_COUNT, PKG_NAME, PKG_VERSION, PKG_BUILDNUM, CMAKE_ARGS) and installs into a temporary PREFIX. The
   build dependencies are the system's (scripts/install-deps.sh), not a conda environment.
3. In a temporary test directory holding the recipe's test: source_files, each command of test: commands
   (recipes/ksieve/meta.yaml rendered as conda-build renders it on Linux) runs with PREFIX/bin first on PATH
   and must succeed; the first that fails is reported with its output.

It builds the ksieve executable and its man page (Release, tests and benchmarks off, CPU_COUNT jobs): the
one slow step. Usage: test_recipe.py [CPU_COUNT]   (default 2)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import recipe_meta

ROOT = recipe_meta.ROOT


def source_files():
    """The files of the source tree: tracked by git or not ignored by it (the whole tree outside git)."""
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True)
    if r.returncode == 0:
        return [p for p in r.stdout.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]
    found = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files]
    return found


def copy_tree(files, dest):
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), os.path.join(dest, rel), follow_symlinks=False)


def main():
    cpus = sys.argv[1] if len(sys.argv) > 1 else "2"
    work = tempfile.mkdtemp(prefix="ksieve-recipe-")
    src, prefix, test_dir = (os.path.join(work, d) for d in ("work", "prefix", "test"))
    copy_tree(source_files(), src)
    os.makedirs(prefix)
    recipe = recipe_meta.render(src)
    version = str(recipe["package"]["version"])

    env = dict(os.environ, PREFIX=prefix, SRC_DIR=src, RECIPE_DIR=os.path.join(src, "recipes", "ksieve"),
               CPU_COUNT=cpus, PKG_NAME=recipe["package"]["name"], PKG_VERSION=version,
               PKG_BUILDNUM=str(recipe["build"]["number"]),
               CMAKE_ARGS=f"-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX={prefix} -DCMAKE_INSTALL_LIBDIR=lib")
    start = time.monotonic()
    build = subprocess.run(["bash", os.path.join(src, "recipes", "ksieve", "build.sh")], cwd=src, env=env,
                           capture_output=True, text=True)
    print(f"recipe: build.sh took {time.monotonic() - start:.0f} s")
    if build.returncode != 0:
        print(build.stdout[-6000:], build.stderr[-6000:], file=sys.stderr)
        sys.exit(f"recipe: build.sh failed (exit status {build.returncode})")

    test = recipe.get("test") or {}
    os.makedirs(test_dir)
    copy_tree(test.get("source_files") or [], test_dir)
    test_env = dict(env, PATH=os.path.join(prefix, "bin") + os.pathsep + os.environ["PATH"])
    commands = test.get("commands") or []
    if not commands:
        sys.exit("recipe: meta.yaml has no test commands")
    for command in commands:
        r = subprocess.run(["bash", "-e", "-c", command], cwd=test_dir, env=test_env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:], file=sys.stderr)
            sys.exit(f"recipe: test command failed (exit status {r.returncode}): {command}")
    shutil.rmtree(work, ignore_errors=True)
    print(f"recipe: ksieve {version} built and installed by build.sh; its {len(commands)} test commands pass")


if __name__ == "__main__":
    main()
