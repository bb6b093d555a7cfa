#!/usr/bin/env bash
# make molecule: the scenarios on the running lab. `default` first (site.yml: it converges every phase, so
# it runs alone); then the others side by side: each works on objects of its own (docs/lab.md, "Molecule
# scenarios") and their playbook runs take the region's run lock in turn. Each scenario's output is kept
# in a log and printed when it ends, with one `molecule:` line per scenario; the exit status is the first
# failure's. `tests/molecule.sh default` runs only `default`, `tests/molecule.sh others` only the others
# (tests/suite.sh runs the lab-only integration tests beside both parts).
set -uo pipefail
cd "$(dirname "$0")/.." || exit
logs=.cache/test-logs
mkdir -p "$logs"

run() {
  local scenario=$1 start status
  start=$(date +%s)
  molecule test -s "$scenario" > "$logs/molecule-$scenario.log" 2>&1
  status=$?
  echo "molecule: $scenario $(( $(date +%s) - start ))s (exit $status)" >> "$logs/molecule-$scenario.log"
  return "$status"
}

show() {
  cat "$logs/molecule-$1.log"
}

part=${1:-all}
case "$part" in all|default|others) ;; *) echo "usage: $0 [all|default|others]" >&2; exit 2 ;; esac

status=0
if [ "$part" != others ]; then
  run default || status=$?
  show default
  [ "$status" = 0 ] && [ "$part" = all ] || exit "$status"
fi

others=()
for file in molecule/*/molecule.yml; do
  scenario=$(basename "$(dirname "$file")")
  [ "$scenario" = default ] || others+=("$scenario")
done
pids=()
for scenario in "${others[@]}"; do
  run "$scenario" &
  pids+=($!)
done
for index in "${!others[@]}"; do
  wait "${pids[$index]}"
  rc=$?
  if [ "$rc" != 0 ] && [ "$status" = 0 ]; then status=$rc; fi
  show "${others[$index]}"
done
exit "$status"
