#!/usr/bin/env python3
"""MultiQC's General Statistics of ksieve's --multiqc files, rendered by the multiqc on PATH.

Three samples of the bundled reads are classified against a filter of the bundled lambda genome: all the
reads (s1), the first 100 (s2) and the novel reads of s1 (s3: no read known). Each run writes its --stats
and, with --multiqc S_mqc.json, S_general_mqc.json beside it. MultiQC over the six files must put into
multiqc_data/multiqc_general_stats.txt, for each sample, the reads, % known, % novel and bases removed that
its --stats say (reads, 100 known / reads, 100 novel / reads, bases_known), and name ksieve's version in
the columns' descriptions (multiqc_data.json). The stats' bases per class add up to their bases, and the
bases of s3's known reads are 0. --multiqc - and /dev/null write the bar graph alone, no file beside them.

Usage: test_multiqc.py KSIEVE_BINARY
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "examples", "data")
COLUMNS = ("reads", "percent_known", "percent_novel", "bases_removed")


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r.stdout


def make_samples(ksieve, work):
    """The read files of s1, s2 and s3 in work."""
    shutil.copy(os.path.join(DATA, "reads.fq.gz"), os.path.join(work, "s1.fq.gz"))
    with gzip.open(os.path.join(DATA, "reads.fq.gz"), "rt") as f:
        lines = f.read().splitlines()
    with open(os.path.join(work, "s2.fq"), "w") as f:
        f.write("\n".join(lines[:400]) + "\n")
    run([ksieve, "build", "-q", "-o", "lambda.ksf", os.path.join(DATA, "lambda.fa.gz")], work)
    run([ksieve, "classify", "-q", "-f", "lambda.ksf", "--novel", "s3.fq", "s1.fq.gz"], work)
    return {"s1": "s1.fq.gz", "s2": "s2.fq", "s3": "s3.fq"}


def general_stats(path):
    """{sample: {column suffix: value}} of multiqc_general_stats.txt (ksieve classify's columns)."""
    rows = [line.rstrip("\n").split("\t") for line in open(path)]
    out = {}
    for row in rows[1:]:
        values = {}
        for header, value in zip(rows[0][1:], row[1:]):
            for column in COLUMNS:
                if header.endswith("ksieve_classify_" + column) and value != "":
                    values[column] = float(value)
        out[row[0]] = values
    return out


def main():
    ksieve = os.path.abspath(sys.argv[1])
    if shutil.which("multiqc") is None:
        sys.exit("multiqc not found (apt-get install multiqc)")
    version = run([ksieve, "--version"], ROOT).split()[-1]
    work = tempfile.mkdtemp(prefix="ksieve-multiqc-")
    stats = {}
    os.makedirs(os.path.join(work, "qc"))
    for sample, reads in make_samples(ksieve, work).items():
        run([ksieve, "classify", "-q", "-f", "lambda.ksf", "--sample", sample, "--stats", f"{sample}.json",
             "--multiqc", os.path.join("qc", f"{sample}_mqc.json"), reads], work)
        stats[sample] = json.load(open(os.path.join(work, f"{sample}.json")))
        s = stats[sample]
        check(s["bases_known"] + s["bases_novel"] == s["bases"], f"{sample}: bases_known + bases_novel = bases")
        check(os.path.isfile(os.path.join(work, "qc", f"{sample}_general_mqc.json")),
              f"{sample}: --multiqc wrote {sample}_general_mqc.json beside {sample}_mqc.json")
    # standard output and devices get the bar graph alone: no file beside them
    out = run([ksieve, "classify", "-q", "-f", "lambda.ksf", "--sample", "s1", "--multiqc", "-", "s1.fq.gz"], work)
    check(json.loads(out)["plot_type"] == "bargraph", "--multiqc - writes the bar graph to standard output")
    run([ksieve, "classify", "-q", "-f", "lambda.ksf", "--multiqc", "/dev/null", "s1.fq.gz"], work)
    check(not os.path.exists("/dev/null_general_mqc.json") and not any("general" in f for f in os.listdir(work)),
          "--multiqc /dev/null and - write no General Statistics file")
    check(stats["s3"]["known"] == 0 and stats["s3"]["bases_known"] == 0 and stats["s1"]["known"] > 0,
          "s3 (the novel reads of s1) has no known read and no known base; s1 has known reads")
    run(["multiqc", "-q", "-f", "-o", "report", "qc"], work)
    data = os.path.join(work, "report", "multiqc_data")
    table = general_stats(os.path.join(data, "multiqc_general_stats.txt"))
    check(sorted(table) == ["s1", "s2", "s3"], f"General Statistics has a row per sample ({sorted(table)})")
    for sample, s in stats.items():
        want = {"reads": s["reads"], "percent_known": 100 * s["known"] / s["reads"],
                "percent_novel": 100 * s["novel"] / s["reads"], "bases_removed": s["bases_known"]}
        got = table.get(sample, {})
        check(sorted(got) == sorted(want) and all(abs(got[k] - want[k]) < 1e-9 for k in want),
              f"{sample}: General Statistics {got} are its stats {want}")
    headers = json.load(open(os.path.join(data, "multiqc_data.json")))["report_general_stats_headers"]
    columns = {k: v for group in headers for k, v in group.items() if k.startswith("ksieve_classify_")}
    check(sorted(columns) == sorted("ksieve_classify_" + c for c in COLUMNS), f"the ksieve columns ({sorted(columns)})")
    check(columns.get("ksieve_classify_percent_known", {}).get("title") == "% known", "the column % known")
    check(all(f"ksieve {version} classify" in c.get("description", "") for c in columns.values()),
          f"each column names ksieve {version}")
    shutil.rmtree(work, ignore_errors=True)
    finish("multiqc", f"General Statistics of 3 samples hold ksieve {version}'s columns, as their stats say")


if __name__ == "__main__":
    main()
