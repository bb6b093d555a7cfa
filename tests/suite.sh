#!/usr/bin/env bash
# make test: the static checks (unit, lint, sanity) run beside the lab's tests (integration, then
# molecule) instead of before them. The lab's tests spend much of their time waiting on operators'
# timings, and the static checks need no lab, so together they finish minutes earlier on two cores.
# They start once the region's fixture has built the region (COBALTCORE_REGION_BUILT_FILE), or once the
# region's tests ended if it never did: the build keeps the CPU ~70 % busy and took ~45 s longer with them
# beside it (282 vs 237 s), the tests after it ~55 %. They run at a lower priority (nice 10) and still end
# long before the lab's tests.
# The static checks' output is kept in a log and printed once they end; the exit status is the
# first failure's, and a line per part says how long it took.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
make=${MAKE:-make}
logs=.cache/test-logs
mkdir -p "$logs"
static_log="$logs/static.log"
region_built="$PWD/$logs/region-built"
region_done="$logs/region-done"
rm -f "$region_built" "$region_done"
began=$(date +%s)

(
  while [ ! -e "$region_built" ] && [ ! -e "$region_done" ]; do sleep 2; done
  echo "suite: static checks started $(( $(date +%s) - began ))s into the suite"
  status=0
  for target in unit lint sanity; do
    start=$(date +%s)
    nice -n 10 "$make" --no-print-directory "$target" || status=$?
    echo "suite: $target $(( $(date +%s) - start ))s (exit $status)"
    [ "$status" = 0 ] || break
  done
  exit "$status"
) > "$static_log" 2>&1 &
static=$!

lab_status=0
start=$(date +%s)
"$make" --no-print-directory lab-build || lab_status=$?
if [ "$lab_status" = 0 ]; then
  started=0
  .venv/bin/python -m regionlab running || started=1
  if "$make" --no-print-directory lab-up >/dev/null; then
    # The region's tests first (one converged region), then the lab-only tests (conftest.LAB_ONLY: objects of
    # their own, nothing the region's tests count or the scenarios read) in two halves: those that write
    # standins.yaml (conftest.STANDINS_MARK) and those marked to balance the halves (conftest.BESIDE_DEFAULT_MARK)
    # beside molecule's default scenario, whose converge and idempotence find the region converged; the others
    # beside the other scenarios, which inject faults through standins.yaml.
    COBALTCORE_REGION_BUILT_FILE="$region_built" \
      "$make" --no-print-directory integration INTEGRATION_MARKERS="not lab_only" || lab_status=$?
    touch "$region_done"
    echo "suite: integration (the region's tests) $(( $(date +%s) - start ))s (exit $lab_status)"
    for part in default others; do
      [ "$lab_status" = 0 ] || break
      if [ "$part" = default ]; then markers="lab_only and (standins or beside_default)"
      else markers="lab_only and not standins and not beside_default"; fi
      start=$(date +%s)
      lab_only_log="$logs/integration-lab-only-$part.log"
      ( begun=$(date +%s); status=0
        "$make" --no-print-directory integration INTEGRATION_MARKERS="$markers" || status=$?
        echo "suite: integration ($markers, beside molecule $part) $(( $(date +%s) - begun ))s (exit $status)"
        exit "$status" ) > "$lab_only_log" 2>&1 &
      lab_only=$!
      "$make" --no-print-directory molecule MOLECULE_PART=$part || lab_status=$?
      lab_only_status=0
      wait "$lab_only" || lab_only_status=$?
      cat "$lab_only_log"
      [ "$lab_status" = 0 ] && lab_status=$lab_only_status
      echo "suite: lab-only tests ($markers) beside molecule $part $(( $(date +%s) - start ))s (exit $lab_status)"
    done
  else
    lab_status=1
  fi
  if [ "$started" = 1 ]; then "$make" --no-print-directory lab-down >/dev/null 2>&1 || true; fi
fi

touch "$region_done"  # the lab never came up: the static checks need not wait
static_status=0
wait "$static" || static_status=$?
echo "suite: static checks' output ($static_log):"
cat "$static_log"
echo "suite: done in $(( $(date +%s) - began ))s: static checks exit $static_status, lab tests exit $lab_status"
[ "$static_status" = 0 ] || exit "$static_status"
exit "$lab_status"
