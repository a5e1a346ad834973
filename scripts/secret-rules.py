"""Converts gitleaks' published default config (config/gitleaks.toml, MIT) into the adapter's
rule data: adapters/src/secrets/gitleaks-rules.json.

  python3 scripts/secret-rules.py path/to/gitleaks.toml <gitleaks commit>

Kept: each rule's id, regex (RE2 syntax, matched by re2js), secretGroup, entropy, keywords and its
allowlists' regexes and stopwords; the global allowlist's regexes and stopwords. Dropped: path
allowlists and the rules limited to files of one kind (a hook scans text, not files).
"""
import json
import sys
import tomllib

source, commit = sys.argv[1], sys.argv[2]
with open(source, "rb") as f:
    config = tomllib.load(f)


def allowlist(a):
    if a.get("paths") and a.get("condition") == "AND":
        return None  # only for files of one kind: never applies to a hook's text
    if not a.get("regexes") and not a.get("stopwords"):
        return None
    out = {"target": a.get("regexTarget", "secret")}
    if a.get("regexes"):
        out["regexes"] = a["regexes"]
    if a.get("stopwords"):
        out["stopwords"] = [s.lower() for s in a["stopwords"]]
    return out


rules = []
for r in config["rules"]:
    if "regex" not in r or "path" in r:
        continue  # a rule for files of one kind (.tf, .php, nuget.config): a hook's text has no file name
    rule = {"id": r["id"], "regex": r["regex"], "keywords": [k.lower() for k in r.get("keywords", [])]}
    if "secretGroup" in r:
        rule["secretGroup"] = r["secretGroup"]
    if "entropy" in r:
        rule["entropy"] = r["entropy"]
    lists = [x for x in (allowlist(a) for a in r.get("allowlists", [])) if x]
    if lists:
        rule["allowlists"] = lists
    rules.append(rule)

g = config["allowlist"]
data = {
    "source": f"gitleaks config/gitleaks.toml at {commit} (MIT, Copyright (c) 2019 Zachary Rice)",
    "allowlist": {"regexes": g.get("regexes", []), "stopwords": [s.lower() for s in g.get("stopwords", [])]},
    "rules": rules,
}
with open("adapters/src/secrets/gitleaks-rules.json", "w") as f:
    json.dump(data, f, indent=0, separators=(",", ":"))
    f.write("\n")
print(f"{len(rules)} rules")
