#!/usr/bin/env python3
"""The Snakemake workflow (examples/snakemake) as the Snakemake workflow catalog expects it.

1. `.test/` (a configuration and sample sheet of the bundled example) runs end to end as CI runs it: a copy
   of .test/ is the working directory, and its config/config.yaml is the configuration (relative to the
   working directory, as the template has it: 2 host parts, not the 4 of the workflow's own config). Every
   job passed its mem_mb less a tenth to ksieve: each sample's --stats record memory_limit 460 MiB (mem_mb
   512), and MultiQC's General Statistics hold each sample's % known as its stats say.
2. `snakemake --report` renders the report of that run: the MultiQC report and each sample's statistics
   under their categories, with their captions. (Snakemake downloads the report's JavaScript libraries and
   their licenses; offline they are stood in by empty text, which changes nothing that is checked.)
3. .snakemake-workflow-catalog.yml says how to run the workflow and that it has a report; config/README.md
   describes the configuration; the Slurm profile (profiles/slurm/config.yaml) names the Slurm executor and
   sets threads, mem_mb and runtime only for rules the workflows have, mem_mb and runtime for each rule of
   them.

Usage: test_snakemake_catalog.py KSIEVE_BINARY
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMK = os.path.join(ROOT, "examples", "snakemake")
SNAKEFILE = os.path.join(SMK, "workflow", "Snakefile")
SCREEN = os.path.join(SMK, "workflow", "screen.smk")
# snakemake --report with its downloads stood in by empty text (offline)
OFFLINE_REPORT = """
import sys
import requests

class _Offline:
    status_code = requests.codes.ok
    text = ""

requests.get = lambda url, *args, **kwargs: _Offline()
from snakemake import main
sys.argv[0] = "snakemake"
sys.exit(main())
"""


def snakemake(args, env, cwd, python=None):
    cmd = ([python, "-c", OFFLINE_REPORT] if python else ["snakemake"]) + args
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
    return r


def snakemake_python():
    """The interpreter of the snakemake on PATH (its script's first line)."""
    with open(shutil.which("snakemake")) as f:
        first = f.readline()
    return first[2:].strip().split()[0] if first.startswith("#!") else sys.executable


def general_stats(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path)]
    column = next((i for i, h in enumerate(rows[0]) if h.endswith("ksieve_classify_percent_known")), None)
    return {row[0]: float(row[column]) for row in rows[1:]} if column is not None else {}


def check_test_run(work, env):
    test = os.path.join(work, ".test")
    shutil.copytree(os.path.join(SMK, ".test"), test)
    r = snakemake(["--snakefile", SNAKEFILE, "--directory", test, "--cores", "2"], env, work)
    if not check(r.returncode == 0, "snakemake runs .test/ (its config/config.yaml)"):
        return None
    parts = os.listdir(os.path.join(test, "logs", "host_part"))
    check(len(parts) == 2, f".test/config/config.yaml's 2 host parts ran ({len(parts)})")
    known = general_stats(os.path.join(test, "results", "multiqc", "multiqc_data", "multiqc_general_stats.txt"))
    check(sorted(known) == ["A", "B"], f"MultiQC's General Statistics have samples A and B ({sorted(known)})")
    for sample in ("A", "B"):
        stats = json.load(open(os.path.join(test, "results", "stats", f"{sample}.stats.json")))
        check(stats["memory_limit"] == 460 << 20, f"{sample}: memory_limit {stats['memory_limit']} is 460 MiB")
        check(abs(known.get(sample, -1) - 100 * stats["known"] / stats["reads"]) < 1e-9,
              f"{sample}: General Statistics' % known is its stats'")
    return test


def check_report(test, env):
    report = os.path.join(test, "report.html")
    r = snakemake(["--snakefile", SNAKEFILE, "--directory", test, "--report", report], env, test,
                  python=snakemake_python())
    if not check(r.returncode == 0 and os.path.isfile(report), "snakemake --report renders the report"):
        return
    html = open(report, encoding="utf-8", errors="replace").read()
    for text in ("Host removal", "Quality control", "multiqc_report.html", "A.stats.json", "B.stats.json",
                 "The statistics of ksieve classify for sample", "Host removal and per-sample filters with ksieve"):
        check(text in html, f"the report holds {text!r}")


def rules_of(snakefile, env, work):
    r = snakemake(["--snakefile", snakefile, "--directory", work, "--list", "--config", "demo=true"], env, work)
    return {l.strip() for l in r.stdout.splitlines() if re.fullmatch(r"\w+", l.strip())} - {"all"} if check(r.returncode == 0, f"snakemake --list {snakefile}") else set()


def check_catalog_files(env, work):
    catalog = yaml.safe_load(open(os.path.join(SMK, ".snakemake-workflow-catalog.yml")))
    usage = catalog.get("usage") or {}
    check(usage.get("report") is True and "software-stack-deployment" in usage and
          (usage.get("mandatory-flags") or {}).get("desc"), ".snakemake-workflow-catalog.yml: usage, report")
    readme = open(os.path.join(SMK, "config", "README.md")).read()
    config = yaml.safe_load(open(os.path.join(SMK, "config", "config.yaml")))
    check(all(f"`{key}`" in readme for key in config), "config/README.md describes every key of config.yaml")
    profile = yaml.safe_load(open(os.path.join(SMK, "profiles", "slurm", "config.yaml")))
    check(profile.get("executor") == "slurm", "the Slurm profile names the slurm executor")
    rules = rules_of(SNAKEFILE, env, work) | rules_of(SCREEN, env, work)
    resources = profile.get("set-resources") or {}
    check(set(resources) == rules, f"the Slurm profile sets the resources of every rule and only of those: "
          f"{sorted(set(resources) ^ rules)}")
    check(all({"mem_mb", "runtime"} <= set(v) for v in resources.values()), "each rule gets mem_mb and runtime")
    check(set(profile.get("set-threads") or {}) <= rules, "set-threads names rules of the workflows")


def main():
    ksieve = os.path.abspath(sys.argv[1])
    bindir = tempfile.mkdtemp(prefix="ksieve-bin-")
    os.symlink(ksieve, os.path.join(bindir, "ksieve"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    work = tempfile.mkdtemp(prefix="ksieve-catalog-")
    test = check_test_run(work, env)
    if test:
        check_report(test, env)
    check_catalog_files(env, work)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(bindir, ignore_errors=True)
    finish("snakemake catalog", ".test runs, its report renders, the catalog files and the Slurm profile fit")


if __name__ == "__main__":
    main()
