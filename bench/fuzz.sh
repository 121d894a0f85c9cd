#!/usr/bin/env bash
# bench/fuzz.sh TARGET [N]: N executions (default 1,000,000) of a fuzz target: search_query and
# config_value of src/fuzzing.rs, web_request of src/frontends/web/fuzz.rs (in the binary) with the stable driver: seeded mutations, every panic counted
# as a crash. Prints one line: execs, crashes, time, rate; a crash prints its input and fails the run.
#
#   bench/fuzz.sh search_query            # a million queries, release-like build (profile quick)
#   PROFILE=dev bench/fuzz.sh web_request 100000
#   SEED=7 bench/fuzz.sh config_value
#
# The same targets run under libFuzzer, guided by coverage, on stable Rust too (`cd fuzz && cargo fuzz run
# -s none --dev search_query`; docs/testing.md, *Fuzzing*); `cargo test` runs a bounded pass of each
# (fuzzing::tests).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: bench/fuzz.sh TARGET [N]  (TARGET: search_query, web_request, config_value)}
n=${2:-1000000}
profile=${PROFILE:-quick}
export JULES_FUZZ_TARGET=$target JULES_FUZZ_EXECS=$n
if [[ -n ${SEED:-} ]]; then export JULES_FUZZ_SEED=$SEED; fi
if [[ $target == web_request ]]; then
  set -- --bin git-jules -q frontends::web::fuzz::tests::drive
else
  set -- --lib -q fuzzing::tests::drive
fi
cargo test --profile "$profile" "$@" -- --ignored --exact --nocapture 2>&1 |
  grep -E '^(fuzz |first crash|input:)|panicked|error'
