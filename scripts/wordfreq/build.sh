#!/usr/bin/env bash
# Regenerates nlp/wordfreq.txt, the general-English prior of word information (nlp.GeneralIDF):
# words.py lists English's most frequent words from the package wordfreq (code Apache-2.0,
# data CC BY-SA 4.0), in a venv under ~/.cache/salience, and analyse.go turns
# them into nlp.Terms's terms. Run it again when the analyser (stop words, stemming) changes.
# Usage: scripts/wordfreq/build.sh [N words, default 40000]
set -euo pipefail
CACHE=${SALIENCE_CACHE:-$HOME/.cache/salience}
VENV=$CACHE/venv-wordfreq
WORDFREQ_VERSION=3.1.1
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import wordfreq' 2>/dev/null; then
  "$VENV/bin/pip" install -q "wordfreq==$WORDFREQ_VERSION"
fi
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
"$VENV/bin/python" "$DIR/words.py" "${1:-40000}" | (cd "$ROOT" && go run scripts/wordfreq/analyse.go) >"$ROOT/nlp/wordfreq.txt"
echo "wrote nlp/wordfreq.txt ($(wc -l <"$ROOT/nlp/wordfreq.txt") lines)"
