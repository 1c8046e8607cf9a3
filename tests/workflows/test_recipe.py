#!/usr/bin/env python3
"""The recipe that scripts/release.sh makes builds ksieve from its tarball and passes its own tests, as
conda-build would run them (without conda).

1. scripts/release.sh VERSION writes the source tarball and the recipe to submit into a temporary folder;
   run twice, it writes the same tarball (reproducible). The recipe's url names that tarball (its file name)
   and its sha256 is the tarball's; it passes the lint rules of bioconda (recipe_meta.lint: a url and sha256,
   no git or path source, compiler('cxx') with stdlib('c'), run_exports, additional-platforms linux-aarch64
   and osx-arm64, license, home, summary, tests).
2. The tarball is unpacked into a temporary SRC_DIR, as conda-build unpacks the source into its work
   directory; the recipe's build.sh runs there with the variables conda-build sets (PREFIX, SRC_DIR,
   RECIPE_DIR, CPU_COUNT, PKG_NAME, PKG_VERSION, PKG_BUILDNUM, CMAKE_ARGS) and installs into a temporary
   PREFIX. The build dependencies are the system's (scripts/install-deps.sh), not a conda environment.
3. In a temporary test directory holding the recipe's test: source_files (from the tarball), each command of
   test: commands (the bundled demo) runs with PREFIX/bin first on PATH and must succeed; the first that
   fails is reported with its output.

The source tree must be a git checkout (the tarball is a git archive of its HEAD, without uncommitted
changes); elsewhere the test is skipped (exit 77) with the reason. It builds the ksieve executable and its
man page (Release, tests and benchmarks off, CPU_COUNT jobs): the one slow step.
Usage: test_recipe.py [CPU_COUNT]   (default 2)
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import recipe_meta

ROOT = recipe_meta.ROOT
SKIP = 77


def release(version, outdir):
    """scripts/release.sh VERSION OUTDIR: (tarball, recipe folder)."""
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "release.sh"), version, outdir], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"recipe: scripts/release.sh failed (exit status {r.returncode}): {r.stderr[-3000:]}")
    return os.path.join(outdir, f"ksieve-{version}.tar.gz"), os.path.join(outdir, "recipe")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_release(work, version):
    """The tarball and recipe of release.sh, checked; (tarball, recipe folder, rendered recipe)."""
    tarball, recipe_dir = release(version, os.path.join(work, "dist"))
    again, _ = release(version, os.path.join(work, "again"))
    if sha256(again) != sha256(tarball):
        sys.exit("recipe: release.sh wrote two different tarballs of one commit")
    recipe = recipe_meta.render(ROOT, recipe_dir)
    source = recipe.get("source") or {}
    if os.path.basename(str(source.get("url", ""))) != os.path.basename(tarball):
        sys.exit(f"recipe: the url {source.get('url')} does not name the tarball {os.path.basename(tarball)}")
    if source.get("sha256") != sha256(tarball):
        sys.exit(f"recipe: sha256 {source.get('sha256')} is not the tarball's {sha256(tarball)}")
    problems = recipe_meta.lint(recipe_dir)
    if problems:
        sys.exit(f"recipe: bioconda's lint rules fail: {problems}")
    return tarball, recipe_dir, recipe


def unpack(tarball, work, version):
    with tarfile.open(tarball) as t:
        t.extractall(work)
    return os.path.join(work, f"ksieve-{version}")


def run_build(src, prefix, recipe_dir, recipe, cpus):
    version = str(recipe["package"]["version"])
    env = dict(os.environ, PREFIX=prefix, SRC_DIR=src, RECIPE_DIR=recipe_dir, CPU_COUNT=cpus,
               PKG_NAME=recipe["package"]["name"], PKG_VERSION=version,
               PKG_BUILDNUM=str(recipe["build"]["number"]),
               CMAKE_ARGS=f"-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX={prefix} -DCMAKE_INSTALL_LIBDIR=lib")
    start = time.monotonic()
    build = subprocess.run(["bash", os.path.join(recipe_dir, "build.sh")], cwd=src, env=env,
                           capture_output=True, text=True)
    print(f"recipe: build.sh took {time.monotonic() - start:.0f} s")
    if build.returncode != 0:
        print(build.stdout[-6000:], build.stderr[-6000:], file=sys.stderr)
        sys.exit(f"recipe: build.sh failed (exit status {build.returncode})")
    return env


def run_tests(recipe, src, test_dir, env):
    test = recipe.get("test") or {}
    os.makedirs(test_dir)
    for rel in test.get("source_files") or []:
        os.makedirs(os.path.dirname(os.path.join(test_dir, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(test_dir, rel))
    test_env = dict(env, PATH=os.path.join(env["PREFIX"], "bin") + os.pathsep + os.environ["PATH"])
    commands = test.get("commands") or []
    if not commands:
        sys.exit("recipe: meta.yaml has no test commands")
    for command in commands:
        r = subprocess.run(["bash", "-e", "-c", command], cwd=test_dir, env=test_env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:], file=sys.stderr)
            sys.exit(f"recipe: test command failed (exit status {r.returncode}): {command}")
    return commands


def main():
    cpus = sys.argv[1] if len(sys.argv) > 1 else "2"
    if subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True).returncode != 0:
        print(f"recipe: SKIPPED: {ROOT} is not a git checkout (the release tarball is a git archive)")
        sys.exit(SKIP)
    version = str(recipe_meta.render()["package"]["version"])
    work = tempfile.mkdtemp(prefix="ksieve-recipe-")
    tarball, recipe_dir, recipe = check_release(work, version)
    src = unpack(tarball, os.path.join(work, "work"), version)
    prefix = os.path.join(work, "prefix")
    os.makedirs(prefix)
    env = run_build(src, prefix, recipe_dir, recipe, cpus)
    commands = run_tests(recipe, src, os.path.join(work, "test"), env)
    shutil.rmtree(work, ignore_errors=True)
    print(f"recipe: ksieve {version} built from {os.path.basename(tarball)} (sha256 as the recipe says) by its "
          f"build.sh; its {len(commands)} test commands pass")


if __name__ == "__main__":
    main()
