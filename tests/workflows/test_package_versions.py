#!/usr/bin/env python3
"""The packaging around ksieve names the version the source tree builds, and no package that does not exist.

- The version is project(ksieve VERSION x.y.z) in CMakeLists.txt; `ksieve --version` of the executable under
  test prints it.
- recipes/ksieve/meta.yaml, rendered as conda-build renders it on Linux, has that version (a literal, as
  bioconda expects), the url of the release tarball of that version with the template's zero checksum
  (scripts/release.sh fills in the tarball's), recipe maintainers, a test that checks `ksieve --version`, and
  skips no platform but Windows.
- Every environment of the workflow examples pins each package to a version; ksieve's is this version, and
  each file naming a ksieve package or container image says that ksieve is not published yet. The Snakemake
  and Nextflow examples pin the same MultiQC; each Nextflow module's docker and singularity images carry the
  version its environment pins; the Nextflow manifest's version is ksieve's.
- README.md and docs/ name no bioconda ksieve package or container image as if it existed.

Usage: test_package_versions.py KSIEVE_BINARY
"""
import os
import re
import subprocess
import sys

import yaml

import recipe_meta
from checks import check, failures

ROOT = recipe_meta.ROOT
NOTE = "not published"
# a ksieve package or image: bioconda::ksieve=V, "- ksieve=V" in an environment, biocontainers' ksieve:V
NAMES_PACKAGE = re.compile(r"bioconda::ksieve\b|^\s*-\s*ksieve\s*[=<>]|(?:biocontainers|singularity)/ksieve:", re.M)



def files_under(*parts, suffixes=(".yml", ".yaml", ".nf", ".config", ".md", ".smk")):
    base = os.path.join(ROOT, *parts)
    if os.path.isfile(base):
        yield base
        return
    for d, dirs, files in os.walk(base):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in sorted(files):
            if f.endswith(suffixes) or f == "Snakefile":
                yield os.path.join(d, f)


def pinned(path):
    """{package: version} of a conda environment file; every dependency must be pinned with =."""
    pins = {}
    for dep in yaml.safe_load(open(path)).get("dependencies") or []:
        m = re.fullmatch(r"(?:[\w-]+::)?([\w.-]+)\s*=\s*([\w.]+)", str(dep))
        if check(m is not None, f"{os.path.relpath(path, ROOT)}: {dep} is pinned to a version"):
            pins[m.group(1)] = m.group(2)
    return pins


def check_recipe(version):
    recipe = recipe_meta.render()
    check(str(recipe["package"]["version"]) == version, f"meta.yaml's version {recipe['package']['version']} is {version}")
    raw = open(os.path.join(recipe_meta.RECIPE, "meta.yaml")).read()
    check(re.search(rf'^\{{% set version = "{re.escape(version)}" %\}}$', raw, re.M) is not None,
          f"meta.yaml sets the version {version} as a literal")
    source = recipe.get("source") or {}
    check(source.get("url") == f"https://github.com/ksieve/ksieve/releases/download/v{version}/ksieve-{version}.tar.gz",
          "meta.yaml: the source is the release tarball of the version")
    check(source.get("sha256") == "0" * 64, "meta.yaml: the template's sha256 is zeros (release.sh fills it in)")
    check(recipe_meta.lint(recipe_meta.RECIPE, release=False) == [],
          f"the template passes bioconda's lint rules: {recipe_meta.lint(recipe_meta.RECIPE, release=False)}")
    check(recipe.get("extra", {}).get("recipe-maintainers"), "meta.yaml: extra: recipe-maintainers")
    check("identifiers" not in recipe.get("extra", {}), "meta.yaml: no identifier of a registry ksieve is not in")
    skips = re.findall(r"^\s*skip:.*$", raw, re.M)
    check(skips and all(re.search(r"#\s*\[win\]\s*$", s) for s in skips), "meta.yaml skips Windows only")
    commands = recipe.get("test", {}).get("commands") or []
    check(f'test "$(ksieve --version)" = "ksieve {version}"' in commands, "meta.yaml's test checks ksieve --version")


def check_environments(version):
    smk_envs = os.path.join(ROOT, "examples", "snakemake", "workflow", "envs")
    nf = os.path.join(ROOT, "examples", "nextflow")
    smk = {}
    for f in sorted(os.listdir(smk_envs)):
        pins = pinned(os.path.join(smk_envs, f))
        check(len(pins) == 1, f"snakemake env {f}: one tool per environment")
        smk.update(pins)
    check(smk.get("ksieve") == version, f"the Snakemake ksieve environment pins {version}")
    for d, _, files in os.walk(os.path.join(nf, "modules")):
        if "environment.yml" not in files:
            continue
        pins = pinned(os.path.join(d, "environment.yml"))
        text = open(os.path.join(d, "main.nf")).read()
        name = os.path.relpath(d, ROOT)
        for tool, pin in pins.items():
            tags = re.findall(rf"/{re.escape(tool)}:([\w.]+?)(?:--[\w]+)?'", text)
            check(tags and all(t == pin for t in tags), f"{name}: the images carry {tool} {pin} ({tags})")
            if tool == "ksieve":
                check(pin == version, f"{name}: ksieve {pin} is {version}")
            elif tool in smk:
                check(pin == smk[tool], f"{name}: {tool} {pin} as in the Snakemake environment ({smk[tool]})")
    manifest = open(os.path.join(nf, "nextflow.config")).read()
    check(re.search(rf"^\s*version\s*=\s*'{re.escape(version)}'", manifest, re.M) is not None,
          f"nextflow.config: manifest.version {version}")


def check_not_published():
    """Each file naming a ksieve package or image says that it is not published yet."""
    named = []
    for path in list(files_under("examples")) + list(files_under("docs")) + \
            [os.path.join(ROOT, f) for f in ("README.md", "environment.yml")]:
        text = open(path).read()
        if NAMES_PACKAGE.search(text):
            named.append(os.path.relpath(path, ROOT))
            check(NOTE in text, f"{os.path.relpath(path, ROOT)} names a ksieve package or image: it says it is {NOTE}")
    check(any("modules/ksieve" in n for n in named) and any("snakemake" in n for n in named),
          "the module and Snakemake environments are found by the search")


def main():
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    version = re.search(r"project\(ksieve VERSION ([0-9]+\.[0-9]+\.[0-9]+)", cmake).group(1)
    out = subprocess.run([sys.argv[1], "--version"], capture_output=True, text=True, check=True).stdout.strip()
    check(out == f"ksieve {version}", f"ksieve --version says {out!r}, CMake {version}")
    check_recipe(version)
    check_environments(version)
    check_not_published()
    if failures:
        print(f"package versions: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print("package versions: all checks passed")


if __name__ == "__main__":
    main()
