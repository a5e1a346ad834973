"""Offline check: how well WordLlama's static table separates on- from off-goal prompts.

WordLlama (PyPI `wordllama` 0.4.0.post1, MIT) ships its 256-dimension table of Llama 2 token
embeddings inside the wheel, so it needs no download: the kind of static table the fold could
afford. Prints the AUC of each prompt's cosine to its goal, per corpus set, as check.py does for
all-MiniLM-L6-v2 (docs/benchmarks.md, Goal drift, Tried).

    npx node bench/drift-semantic-check/dump-corpus.ts > corpus.json
    python -m venv venv && venv/bin/pip install wordllama==0.4.0.post1
    # 0.4.0.post1 looks for its tokenizer in tokenizer/, but the wheel ships it in tokenizers/:
    cp -r venv/lib/python3.*/site-packages/wordllama/tokenizers venv/lib/python3.*/site-packages/wordllama/tokenizer
    venv/bin/python bench/drift-semantic-check/static-llama.py corpus.json
"""
import json
import sys

import numpy as np
from wordllama import WordLlama

model = WordLlama.load(dim=256, disable_download=True)
corpus = json.load(open(sys.argv[1]))


def auc(score, label):
    return float((score[label == 1][:, None] > score[label == 0][None, :]).mean())


for name in ("dev", "held", "wide", "fresh", "fresh2"):
    rows = []
    for goal in corpus[name]["goals"]:
        rows += [(goal["goal"], s, 1) for s in goal["work"] if isinstance(s, str)]
        rows += [(goal["goal"], s, 0) for s in goal["off"] + [s for s in goal["drift"] if isinstance(s, str)]]
    goals = model.embed([r[0] for r in rows], norm=True)
    prompts = model.embed([r[1] for r in rows], norm=True)
    print(name, round(auc((goals * prompts).sum(1), np.array([r[2] for r in rows])), 3))
