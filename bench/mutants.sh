#!/usr/bin/env bash
# bench/mutants.sh [--list] MODULE...: mutation scores (cargo-mutants) of the core modules, each against the
# tests that cover it. MODULE is a source file or folder (src/capabilities/lease/pattern.rs, src/store/sign). Writes a report
# (per module: mutants, caught, missed, timeouts, unviable, score; the missed mutants listed) to stdout and
# to $REPORT (default target/mutants/report.md); every run's cargo-mutants output stays under
# target/mutants/<module>/mutants.out/.
#
#   bench/mutants.sh src/capabilities/lease/pattern.rs src/capabilities/weave/apply.rs
#   bench/mutants.sh --list src/store/eventlog src/store/sync      # counts only: nothing is built
#   TESTS='--test it guard' bench/mutants.sh src/store/guard.rs   # other tests than tests_for's (here tests/it's)
#   ITERATE=1 bench/mutants.sh src/capabilities/weave/apply.rs        # again, only what the last run did not catch
#
# Needs `cargo install cargo-mutants --locked` (26.x). docs/testing.md, *Mutation testing*, has the scores
# and what each missed mutant is (a test now, or why it is equivalent).
#
# How it runs, and why:
# - In place (`--in-place`): cargo-mutants' default copies the tree to a temporary directory, where cargo
#   reuses nothing of the warm target/ and builds all ~340 dependencies again (tens of minutes on 2 shared
#   cores, gigabytes of disk). In place, each mutant rebuilds only this crate, incrementally, in the warm
#   `target/`: 10 to 50 s a mutant. So nothing may edit the tree while it runs, nor build in it (a build
#   would see the mutant; the script refuses a src/ with uncommitted changes and checks afterwards that no
#   mutation was left behind), and in place means one mutant at a time (`--in-place` refuses `--jobs`),
#   which a shared machine wants anyway: everything runs under `nice -n 19`.
# - The dev profile, not a profile of its own: a profile without debuginfo would build every dependency
#   again into its own directory, which costs more than the line tables (`debug = "line-tables-only"`) of
#   one crate ever save. PROFILE=name passes `--profile name` for a machine where that build is paid once.
# - Each module is tested by what covers it, cheapest first: the library's unit tests under its module path
#   (`cargo test --lib lease::`: only the lib test binary rebuilds, and runs in seconds) where those test
#   it; the integration tests of its area (`--test it sync::`: the binary and the `it` binary rebuild, and
#   real repositories run, minutes a mutant) where only they do. The table is `tests_for` below.
# - A timeout per mutant: cargo-mutants sets the tests' from the unmutated baseline run (five times its
#   time, at least 20 s; TIMEOUT=secs overrides), BUILD_TIMEOUT (default 900 s) bounds a build. A mutant
#   that loops forever is a timeout, counted apart from missed (the tests did not pass on it).
# - Memory: the address space of the whole run is capped (MEMORY_GB, default 12 GiB; see below).
# - Do not edit this script while it runs: bash reads it as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
list=false
if [[ ${1:-} == --list ]]; then
  list=true
  shift
fi
(($#)) || {
  sed -n '2,10p' "$0" >&2
  exit 2
}
command -v cargo-mutants >/dev/null || {
  echo "cargo-mutants is needed: cargo install cargo-mutants --locked" >&2
  exit 2
}

# The tests that cover a module: `--lib` or `--test NAME`, then cargo test's arguments (a filter, or `--`
# and libtest's filters).
tests_for() {
  case $1 in
  src/capabilities/lease/* | src/capabilities/lease) echo "--lib lease::" ;;
  # rangediff's lib tests build series with git and compare with git range-diff and git log -p (docs/testing.md).
  src/capabilities/series/rangediff/assignment.rs | src/capabilities/series/rangediff/mod.rs) echo "--lib series::rangediff::" ;;
  src/capabilities/series/rangediff/texts.rs) echo "--lib series::rangediff::" ;;
  src/capabilities/series/rangediff/* | src/capabilities/series/rangediff) echo "--test it series_versions::" ;;
  src/capabilities/mail/view/*) echo "--lib mail::" ;;
  src/store/sign/trust.rs | src/store/sign/mod.rs | src/store/sign/keys.rs | src/store/sign/verdict.rs) echo "--lib -- sign:: eventlog::signed::" ;;
  src/store/sign/* | src/store/sign) echo "--test it sign::" ;;
  src/capabilities/weave/apply.rs) echo "--lib weave::" ;;
  # The event log's core: its lib tests build real logs in temporary repositories (docs/testing.md).
  src/store/eventlog/event.rs | src/store/eventlog/replay.rs | src/store/eventlog/checkpoint.rs) echo "--lib eventlog::" ;;
  src/store/eventlog/append.rs | src/store/eventlog/merge.rs | src/store/eventlog/read.rs) echo "--lib eventlog::" ;;
  src/store/eventlog/signed.rs | src/store/eventlog/walk.rs) echo "--lib eventlog::" ;;
  src/store/eventlog/* | src/store/eventlog) echo "--test it eventlog::" ;;
  # Sync: its lib tests sync real bare clones with a real bare remote (src/store/sync/tests.rs); tests/it adds
  # the races between processes and the real transports.
  src/store/sync/* | src/store/sync) echo "--lib sync::" ;;
  # The guard's lib tests call `check_with` on real bare repositories, no push needed (docs/testing.md).
  src/store/guard.rs) echo "--lib guard::" ;;
  *)
    echo "no test command known for $1; set TESTS" >&2
    return 1
    ;;
  esac
}

out_root=target/mutants
mkdir -p "$out_root"
report=${REPORT:-$out_root/report.md}
profile_args=()
[[ -n ${PROFILE:-} ]] && profile_args=(--profile "$PROFILE")

# The files a module names, as cargo-mutants' `--file` globs.
file_args() {
  if [[ -d $1 ]]; then
    echo "--file ${1%/}/**/*.rs --file ${1%/}/*.rs"
  else
    echo "--file $1"
  fi
}

if $list; then
  for m in "$@"; do
    # shellcheck disable=SC2046 # the globs are cargo-mutants', not the shell's
    n=$(set -f && cargo mutants --list $(file_args "$m") | wc -l)
    printf '%-40s %5d mutants\n' "$m" "$n"
  done
  exit 0
fi

if [[ -z ${FORCE:-} ]] && ! git diff --quiet HEAD -- src; then
  echo "src/ has uncommitted changes; commit them first (cargo-mutants edits src/ in place; FORCE=1 to run anyway)" >&2
  exit 2
fi

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
for m in "$@"; do
  name=$(echo "${m#src/}" | tr '/' '_')
  name=${name%.rs}
  dir=$out_root/$name
  iterate=()
  if [[ -n ${ITERATE:-} && -d $dir/mutants.out ]]; then
    iterate=(--iterate)
  else
    rm -rf "$dir"
    mkdir -p "$dir"
  fi
  tests=${TESTS:-$(tests_for "$m")}
  read -r -a targs <<<"$tests"
  # The test target goes to the build too (`--cargo-arg`): cargo-mutants builds with `cargo test --no-run`
  # and, without it, would build every test target (the binary, tests/it, the benches) for every mutant.
  # The rest (libtest filters) goes to the test run only.
  cargo_args=()
  case ${targs[0]} in
  --lib) cargo_args=(--cargo-arg=--lib) targs=("${targs[@]:1}") ;;
  --test) cargo_args=(--cargo-arg="--test=${targs[1]}") targs=("${targs[@]:2}") ;;
  esac
  start=$(date +%s)
  # Exit codes: 0 all caught, 2 some missed, 3 some timed out; a baseline failure (1, 4) stops the script.
  rc=0
  # A proptest that fails on a mutant would write its seed to proptest-regressions/ in the tree.
  # A mutant can allocate without bound (a loop that pushes forever: one of lease/pattern.rs's reached 20 GiB
  # in a minute, long before its timeout, and would have taken every other process on the machine down with
  # it). The address space of everything the run starts is capped (MEMORY_GB, default 12): such a mutant's
  # allocation fails, its test aborts, and it counts as caught. Builds and honest tests stay far below.
  (set -f && export PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 && ulimit -v $((${MEMORY_GB:-12} * 1024 * 1024)) && nice -n 19 cargo mutants --in-place --no-shuffle "${iterate[@]}" $(file_args "$m") \
    ${TIMEOUT:+--timeout "$TIMEOUT"} --build-timeout "${BUILD_TIMEOUT:-900}" \
    "${profile_args[@]}" "${cargo_args[@]}" --output "$dir" -- "${targs[@]}") || rc=$?
  secs=$(($(date +%s) - start))
  if grep -rl 'changed by cargo-mutants' src >/dev/null; then
    echo "a mutation was left in src/ (grep 'changed by cargo-mutants'); restore it with git checkout" >&2
    exit 1
  fi
  case $rc in 0 | 2 | 3) ;; *)
    echo "cargo mutants failed on $m (exit $rc): see $dir/mutants.out/debug.log" >&2
    exit 1
    ;;
  esac
  cat "$dir/mutants.out/unviable.txt" >>"$dir/unviable-all.txt" 2>/dev/null || true
  python3 - "$m" "$dir/mutants.out/outcomes.json" "$secs" "$tests" >>"$summary" <<'EOF'
import json, sys
module, path, secs, tests = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
doc = json.load(open(path))
count = {"CaughtMutant": 0, "MissedMutant": 0, "Timeout": 0, "Unviable": 0}
# After ITERATE=1, the mutants caught before are not run again: cargo-mutants lists them apart, together
# with the unviable ones, which every run of the module adds to unviable-all.txt.
def names(p):
    try:
        return {l.strip() for l in open(p) if l.strip()}
    except FileNotFoundError:
        return set()
before = names(path.replace("outcomes.json", "previously_caught.txt"))
old_unviable = before & names(path.replace("mutants.out/outcomes.json", "unviable-all.txt"))
count["CaughtMutant"] = len(before - old_unviable)
count["Unviable"] = len(old_unviable)
missed = []
for o in doc["outcomes"]:
    s = o["scenario"]
    if s == "Baseline" or not isinstance(s, dict):
        continue
    summary = o["summary"]
    count[summary] = count.get(summary, 0) + 1
    if summary in ("MissedMutant", "Timeout"):
        m = s["Mutant"]
        missed.append(f"  - {'TIMEOUT ' if summary == 'Timeout' else ''}{m['name']}")
viable = count["CaughtMutant"] + count["MissedMutant"] + count["Timeout"]
score = f"{100 * (count['CaughtMutant'] + count['Timeout']) / viable:.1f}%" if viable else "-"
print(f"| `{module}` | `cargo test {tests}` | {viable + count['Unviable']} | {count['CaughtMutant']} | {count['MissedMutant']} | {count['Timeout']} | {count['Unviable']} | {score} | {secs // 60} min |")
for line in missed:
    print("MISSED" + line)
EOF
done

{
  echo "# Mutation report ($(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD))"
  echo
  echo "| module | tests | mutants | caught | missed | timeouts | unviable | caught of viable | time |"
  echo "|---|---|---|---|---|---|---|---|---|"
  grep -v '^MISSED' "$summary" || true
  if grep -q '^MISSED' "$summary"; then
    echo
    echo "Missed (and timed out):"
    echo
    sed -n 's/^MISSED//p' "$summary"
  fi
} | tee "$report"
