#!/usr/bin/env bash
# Generate (or reuse) the simulated data of ksieve's end-to-end benchmarks.
# Usage: bench/scripts/bench_data.sh [WORK_DIR]   (default $KSIEVE_BENCH_DIR or /tmp/ksieve-bench)
# See bench_common.sh for what is generated and the environment variables.
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"
make_data
echo "mix:  $MIX ($MIX_READS reads; host $MIX_H, other Klebsiella $MIX_O, lambda $MIX_L; $MIX_KMERS k-mers)"
echo "norm: $NORM ($NORM_READS reads; $NORM_KMERS k-mers)"
echo "host: $GENOMES/host.fa ($HOST_KMERS k-mers)"
