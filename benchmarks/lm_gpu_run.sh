#!/usr/bin/env bash
# What ran on the lent H200 for docs/results/lm-agents.md: run from the repository root with the
# wheels sim2human needs in .whl/ (the device has torch and transformers) and the corpora in
# .data/; results land in $OUT (the device tool's folder; set it yourself elsewhere).
# The GPU form, once: the tiny-model LM studies (intake and support, quick) and the intake study
# at three seeds, in parallel on one GPU, then the GRPO cost per model (tiny, SmolLM2's shape).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD/src SIM2HUMAN_DATA=$PWD/.data PYTHONUNBUFFERED=1 NO_COLOR=1 TERM=dumb
nvidia-smi -L; nproc; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())"
mkdir -p /tmp/runs
# on the GPU the warm start can afford the steps a tiny model needs to learn to copy values
for s in lm-collapse lm-support; do
  sed -e 's/^  model: tiny$/  model: tiny\n  device: cuda/' \
      -e 's/^  warm_start: .*/  warm_start: {episodes: 600, epochs: 30, lr: 0.002, batch: 16, style_rate: 0.3}/' \
      -e 's/^  agent: {steps: 20, group_size: 4, warm_start: .*/  agent: {steps: 20, group_size: 4}/' \
      examples/$s.yaml > /tmp/$s-gpu.yaml
done
sed 's/^  steps: 60$/  steps: 40/' /tmp/lm-collapse-gpu.yaml > /tmp/lm-collapse-gpu-3seeds.yaml
run() { local name=$1; shift; ( time timeout 520 python3 -m sim2human study "$@" --out /tmp/runs/$name ) > $OUT/$name.log 2>&1; }
run intake-quick /tmp/lm-collapse-gpu.yaml --quick --workers 4 &
run support-quick /tmp/lm-support-gpu.yaml --quick --workers 4 &
run intake-3seeds /tmp/lm-collapse-gpu-3seeds.yaml --workers 6 &
timeout 300 python3 benchmarks/bench_grpo.py --device cuda --models tiny smollm2-arch --threads 2 --steps 2 > $OUT/bench.log 2>&1
wait
cd /tmp/runs && for r in *; do tar czf $OUT/$r.tgz $r; done
ls -la $OUT
