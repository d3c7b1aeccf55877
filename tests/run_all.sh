#!/usr/bin/env bash
# The whole test suite: library/notebook sync, every notebook (nbdev-test, slow cells included), and pytest.
# Prints one summary line "N passed, N failed" covering notebooks and pytest; exits non-zero on any failure.
# Run it from the repository root with the dev environment's bin/ first on PATH (see the README).
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
workers=${BB_TEST_WORKERS:-2}
passed=0; failed=0
log() { printf '\n== %s ==\n' "$*"; }

log "sync: nbdev-export and nbdev-clean must not change tracked files"
if git rev-parse --git-dir >/dev/null 2>&1; then
  before=$(git status --porcelain --untracked-files=no; git diff | sha1sum)
  nbdev-export && nbdev-clean && python tools/build_readme.py
  after=$(git status --porcelain --untracked-files=no; git diff | sha1sum)
  if [ "$before" = "$after" ]; then passed=$((passed+1)); echo "in sync"
  else failed=$((failed+1)); echo "OUT OF SYNC: these files changed:"; git status --porcelain --untracked-files=no; fi
else echo "not a git checkout: skipped"; fi

log "embedded model: convert once before the parallel runs"
python -c "from bazaarbatna.models import embedded_model_dir; print(embedded_model_dir())" || true

log "notebooks: nbdev-test --flags slow"
total_nbs=$(find nbs -name '*.ipynb' -not -path '*/.*' -not -name '_*' | wc -l)
nbout=$(nbdev-test --flags slow --n-workers "$workers" --timing 2>&1); nbrc=$?
echo "$nbout" | tail -n 60
nb_failed=$(echo "$nbout" | awk '/Tests Failed On The Following Notebooks/{f=1;next} f && /\.ipynb/{n++} END{print n+0}')
[ "$nbrc" -ne 0 ] && [ "$nb_failed" -eq 0 ] && nb_failed=1
passed=$((passed + total_nbs - nb_failed)); failed=$((failed + nb_failed))
echo "notebooks: $((total_nbs - nb_failed)) passed, $nb_failed failed"

log "pytest"
pyout=$(python -m pytest tests -n "$workers" -q -rfE --durations=15 2>&1); pyrc=$?
echo "$pyout" | tail -n 80
last=$(echo "$pyout" | grep -E '[0-9]+ (passed|failed)' | tail -n 1)
py_passed=$(echo "$last" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
py_failed=$(echo "$last" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)
py_errors=$(echo "$last" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+' || echo 0)
py_failed=$((py_failed + py_errors))
[ "$pyrc" -ne 0 ] && [ "$py_failed" -eq 0 ] && py_failed=1
passed=$((passed + py_passed)); failed=$((failed + py_failed))

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
