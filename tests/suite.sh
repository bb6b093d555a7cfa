#!/usr/bin/env bash
# make test: the static checks (unit, lint, sanity) run beside the lab's tests (integration, then
# molecule) instead of before them. The lab's tests spend much of their time waiting on operators'
# timings, and the static checks need no lab, so together they finish minutes earlier on two cores.
# The static checks' output is kept in a log and printed once they end; the exit status is the
# first failure's, and a line per part says how long it took.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
make=${MAKE:-make}
logs=.cache/test-logs
mkdir -p "$logs"
static_log="$logs/static.log"
began=$(date +%s)

(
  status=0
  for target in unit lint sanity; do
    start=$(date +%s)
    "$make" --no-print-directory "$target" || status=$?
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
    "$make" --no-print-directory integration || lab_status=$?
    echo "suite: integration $(( $(date +%s) - start ))s (exit $lab_status)"
    if [ "$lab_status" = 0 ]; then
      start=$(date +%s)
      "$make" --no-print-directory molecule || lab_status=$?
      echo "suite: molecule $(( $(date +%s) - start ))s (exit $lab_status)"
    fi
  else
    lab_status=1
  fi
  if [ "$started" = 1 ]; then "$make" --no-print-directory lab-down >/dev/null 2>&1 || true; fi
fi

static_status=0
wait "$static" || static_status=$?
echo "suite: static checks' output ($static_log):"
cat "$static_log"
echo "suite: done in $(( $(date +%s) - began ))s: static checks exit $static_status, lab tests exit $lab_status"
[ "$static_status" = 0 ] || exit "$static_status"
exit "$lab_status"
