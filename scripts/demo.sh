#!/usr/bin/env bash
# Install dependencies, build ksieve (Release) and run the main job on the bundled example:
# build a quotient filter from the lambda phage genome, then sort a mix of lambda and deformed-wing-virus
# reads into known and novel. Usage: scripts/demo.sh   (outputs in demo-out/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/install-deps.sh --build-only
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DKSIEVE_BUILD_TESTS=OFF -DKSIEVE_BUILD_BENCH=OFF >/dev/null
cmake --build build-release -j "$jobs" --target ksieve
ksieve=build-release/bin/ksieve
mkdir -p demo-out

set -x
$ksieve --version
$ksieve build -o demo-out/lambda.ksf examples/data/lambda.fa.gz
$ksieve info demo-out/lambda.ksf
$ksieve classify -f demo-out/lambda.ksf --novel demo-out/novel.fq.gz --known demo-out/known.fq.gz \
    --report demo-out/report.tsv --stats demo-out/stats.json examples/data/reads.fq.gz
set +x
cat demo-out/stats.json
echo "first lines of the per-read report:"
head -n 4 demo-out/report.tsv
