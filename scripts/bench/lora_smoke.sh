#!/usr/bin/env bash
# Proof that the data trains (docs/adaptation.md): builds a fixit dataset with the real CLI — a
# `ptxbench run` of a scripted model (scripts/bench/lora_smoke_model.py on a loopback port: a wrong
# kernel, then a fixed one) against a local service of one fake GPU, then `ptxbench data build` —
# and trains a small random Qwen3-shaped model with LoRA on it (scripts/bench/lora_smoke.py: the
# loss-mask check per record, then the loss must go down). No key, no network, no weights.
#   scripts/bench/lora_smoke.sh [--out FILE] [--dataset DIR] [--work DIR] [--bin DIR] [--require-gpu] [-- lora_smoke.py options]
# --dataset: train on this folder instead of building one. --work: build under DIR and keep it
# (default: a temporary folder, removed). --bin: where ptxbench is (default build/bin). PYTHON
# picks the interpreter (python3). Exit status: lora_smoke.py's (77: skipped, prerequisites missing:
# torch/transformers/peft, the tokenizer, or with --require-gpu a CUDA device), 1 when the store or
# the dataset could not be built.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${PYTHON:-python3}
bin=$root/build/bin
out=$root/build/lora_smoke.json
dataset="" work="" require_gpu=()
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --dataset) dataset=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --require-gpu) require_gpu=(--require-gpu); shift ;;
    --) shift; break ;;
    *) echo "lora_smoke.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
extra=("$@")

# Skip before building anything when training could not run here.
"$python" "$root/scripts/bench/lora_smoke.py" --check "${require_gpu[@]}" || exit $?

model_pid=""
cleanup() {
  if [ -n "$model_pid" ]; then kill "$model_pid" 2>/dev/null || true; wait "$model_pid" 2>/dev/null || true; fi
  if [ -n "${tmp:-}" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT

if [ -z "$dataset" ]; then
  if [ -z "$work" ]; then tmp=$(mktemp -d -t ptxbench-lora-smoke.XXXXXX); work=$tmp; fi
  mkdir -p "$work"
  [ -x "$bin/ptxbench" ] || { echo "lora_smoke.sh: no $bin/ptxbench: build the ptxbench target" >&2; exit 1; }
  rm -f "$work/model.port"
  "$python" "$root/scripts/bench/lora_smoke_model.py" --port-file "$work/model.port" &
  model_pid=$!
  for _ in $(seq 100); do [ -s "$work/model.port" ] && break; sleep 0.1; done
  [ -s "$work/model.port" ] || { echo "lora_smoke.sh: the scripted model did not start" >&2; exit 1; }
  port=$(cat "$work/model.port")
  # Three definitions × two prompt tags: six trajectories, six different wrong → fixed pairs.
  cat > "$work/run.json" <<EOF
{
  "name": "lora smoke: scripted model, fake GPU",
  "policy": "model",
  "model": {"provider": "openai", "base_url": "http://127.0.0.1:$port/v1", "model": "lora-smoke-scripted",
            "api_key_env": "", "max_tokens": 4096},
  "definitions": ["gemm_n128_k2048", "gemm_n4096_k4096", "gemm_n2048_k4096"],
  "prompt_tags": ["params", "contract"],
  "trajectories_per_tag": 1,
  "num_turns": 3,
  "service": "local"
}
EOF
  cat > "$work/recipe.json" <<EOF
{
  "name": "lora-smoke",
  "kind": "fixit",
  "runs": "all",
  "labels": ["compilation_error", "numerical_error", "runtime_error", "kernel_timeout"],
  "shuffle_seed": 7,
  "allow_fake_verdicts": true,
  "notes": "scripts/bench/lora_smoke.sh: a scripted model on fake GPUs, for the LoRA smoke run only"
}
EOF
  rm -rf "$work/runs" "$work/dataset"
  "$bin/ptxbench" run --config "$work/run.json" --store "$work/runs/runs.db" --runs-dir "$work/runs" \
    --local-service-arg=--fake-gpus --local-service-arg=1
  kill "$model_pid" 2>/dev/null || true
  wait "$model_pid" 2>/dev/null || true
  model_pid=""
  "$bin/ptxbench" data build "$work/recipe.json" --store "$work/runs/runs.db" --out "$work/dataset"
  dataset=$work/dataset
fi

"$python" "$root/scripts/bench/lora_smoke.py" "$dataset" --out "$out" "${require_gpu[@]}" "${extra[@]}"
