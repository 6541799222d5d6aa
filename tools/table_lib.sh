# Shared by the results-table scripts (tools/mimic_table.sh, tools/progression_table.sh), which
# source it: training every (seed, model) run and the statistics over seeds. The functions read
# the caller's variables out (runs folder), seeds, models and jobs, and call its function
# train_one MODEL SEED, which writes OUT/MODEL/seed-SEED/metrics.json.

# Runs train_one for every seed and model, $jobs at a time; returns 1 when one of them failed.
run_all() {
  local s m failed=0
  for s in $seeds; do
    for m in $models; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
      train_one "$m" "$s" &
    done
  done
  while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done
  return "$failed"
}

# mean ± sd (sample sd, n - 1) of jq path P over the seeds of row R, in %.
stat() {
  local r=$1 p=$2 s
  for s in $seeds; do jq -r "$p" "$out/$r/seed-$s/metrics.json"; done |
    awk '{x[NR]=$1; t+=$1} END{m=t/NR; v=0; for(i=1;i<=NR;i++) v+=(x[i]-m)^2;
         sd=NR>1?sqrt(v/(NR-1)):0; printf "%.1f ± %.1f", 100*m, 100*sd}'
}

# The mean over the seeds of row R of the number in each run's file F, with D decimals (0).
seed_mean() {
  local r=$1 f=$2 d=${3:-0} s
  for s in $seeds; do cat "$out/$r/seed-$s/$f"; done |
    awk -v d="$d" '{t+=$1} END{printf "%.*f", d, t/NR}'
}
