#!/usr/bin/env python3
"""TEM: our sampler (`mdp privatize --sampler tem`, Algorithm 3) against mldp-text's TEM
(PyPI `mldp-text`, `mechanisms.TEM.replace_word`) on the same vocabulary, in one run; and
whether each one's output distribution passes `mdp-audit`.

  python3 -m venv /tmp/mldpvenv && /tmp/mldpvenv/bin/pip install mldp-text==0.1.2
  cargo build --release
  /tmp/mldpvenv/bin/python benches/tem_bench.py [--vocab 2000] [--records 200000] [--mldp-records 2000]

Vocabulary: the first --vocab words of shared/data/text_minilm/english2000 (384-d MiniLM
embeddings, Euclidean). Throughput = records / wall seconds of the whole command or loop
(setup included; the setup alone is measured separately). The exactness part builds, on
the first --audit-vocab words, the transition matrix each implementation samples from
(ours: Algorithm 2; mldp-text: read off its code: ⊥ scored −γ + 2 ln(|V|/|L_w|)/ε, γ
rounded to one decimal) as an mdp/1 file and runs mdp-audit on it.
Writes benches/reports/tem_throughput.{md,csv}.
"""
import argparse, csv, json, math, os, platform, random, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data" / "text_minilm"


def load_vocab(n):
    vec = list(csv.reader(open(DATA / "english2000_vectors.csv")))[1:]
    words = [r[1] for r in list(csv.reader(open(DATA / "english2000_words.csv")))[1:]]
    return words[:n], np.array([[float(x) for x in r[1:]] for r in vec[:n]])


def mldp_matrix(X, eps, beta=0.001):
    """The distribution mldp-text's TEM.replace_word samples from, row by row."""
    n = len(X)
    thr = round(2 / eps * math.log(((1 - beta) * n) / beta), 1)
    M = np.zeros((n, n))
    for w in range(n):
        d = np.linalg.norm(X - X[w], axis=1)
        inside = d <= thr
        L = int(inside.sum())
        logits = np.where(inside, -eps / 2 * d, -np.inf)
        bot = eps / 2 * (-thr + 2 * math.log(n / L) / eps)
        outside = n - L
        mx = max(logits.max(), bot)
        wts = np.exp(logits - mx)
        wb = math.exp(bot - mx)
        Z = wts.sum() + wb
        M[w] = wts / Z
        if outside > 0:
            M[w, ~inside] = wb / Z / outside
        # outside == 0: ⊥ keeps mass wb/Z and replace_word raises (np.random.choice([]))
    return M, thr


def audit(audit_bin, space_points, M, eps, tmp):
    doc = {"format": "mdp/1", "epsilon": eps, "metric": {"kind": "euclidean", "points": space_points},
           "matrix": [[repr(float(x)) for x in row] for row in M],
           "meta": {"producer": "tem_bench.py"}}
    p = Path(tmp) / "m.json"
    p.write_text(json.dumps(doc))
    r = subprocess.run([str(audit_bin), "--json", str(p)], capture_output=True, text=True)
    try:
        rep = json.loads(r.stdout)
    except Exception:
        return {"verdict": f"exit {r.returncode}: {r.stderr.strip()[:120]}"}
    worst = None
    for c in rep.get("checks", []):
        if c.get("verdict") != "pass" and worst is None:
            worst = f"{c.get('name')}: {c.get('detail', '')[:160]}"
    return {"verdict": rep.get("verdict"), "eps_tight": rep.get("epsilon_tight"), "detail": worst,
            "row_sum_dev": rep.get("max_row_sum_deviation")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--audit-vocab", type=int, default=200)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[5.0, 20.0, 40.0])
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--mldp-records", type=int, default=2000)
    ap.add_argument("--mdp-bin", type=Path, default=REPO / "target" / "release" / "mdp")
    ap.add_argument("--audit-bin", type=Path, default=REPO / "target" / "release" / "mdp-audit")
    ap.add_argument("--out-dir", type=Path, default=HERE / "reports")
    args = ap.parse_args()

    import mldp_text
    from mldp_text.mechanisms import TEM
    from gensim.models import KeyedVectors

    words, X = load_vocab(args.vocab)
    kv = KeyedVectors(vector_size=X.shape[1])
    kv.add_vectors(words, X.astype(np.float32))
    rng = random.Random(1)
    records = [rng.randrange(len(words)) for _ in range(args.records)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        space = Path(tmp) / "space.json"
        json.dump({"kind": "euclidean", "points": X.tolist()}, open(space, "w"))
        labels = Path(tmp) / "labels.txt"
        labels.write_text("\n".join(words) + "\n")
        inp = Path(tmp) / "records.txt"
        inp.write_text("\n".join(words[i] for i in records) + "\n")
        empty = Path(tmp) / "empty.txt"
        empty.write_text("")
        for eps in args.epsilons:
            base = [str(args.mdp_bin), "privatize", "--sampler", "tem", "--space", str(space), "--epsilon", str(eps),
                    "--labels", str(labels), "--seed", "1", "--output", os.devnull]
            t = time.perf_counter(); subprocess.run(base + ["--input", str(empty)], check=True, capture_output=True)
            setup = time.perf_counter() - t
            t = time.perf_counter(); subprocess.run(base + ["--input", str(inp)], check=True, capture_output=True)
            ours = time.perf_counter() - t
            # vocab=words: its ⊥ score uses len(vocab) (the package default list otherwise).
            mech = TEM(eps, embedding_matrix=kv, dim=X.shape[1], vocab=words)
            np.random.seed(1)
            crashes = 0
            t = time.perf_counter()
            for i in records[: args.mldp_records]:
                try:
                    mech.replace_word(words[i])
                except ValueError:
                    crashes += 1
            theirs = time.perf_counter() - t
            # Exactness on the first --audit-vocab words.
            sub = X[: args.audit_vocab]
            M, thr = mldp_matrix(sub, eps)
            a_theirs = audit(args.audit_bin, sub.tolist(), M, eps, tmp)
            built = Path(tmp) / "ours.json"
            json.dump({"kind": "euclidean", "points": sub.tolist()}, open(Path(tmp) / "sub.json", "w"))
            r = subprocess.run([str(args.mdp_bin), "build", "tem", "--space", str(Path(tmp) / "sub.json"),
                                "--epsilon", str(eps), "-o", str(built)], capture_output=True, text=True)
            if r.returncode != 0:
                a_ours = {"verdict": f"build exit {r.returncode}: {r.stderr.strip()[-120:]}"}
            else:
                a_ours = json.loads(subprocess.run([str(args.audit_bin), "--json", str(built)],
                                                   capture_output=True, text=True).stdout)
            row = {
                "epsilon": eps, "vocab": len(words),
                "ours_records": args.records, "ours_seconds": round(ours, 4), "ours_setup_seconds": round(setup, 4),
                "ours_samples_per_s": round(args.records / ours), "ours_samples_per_s_after_setup": round(args.records / max(ours - setup, 1e-9)),
                "mldp_records": args.mldp_records, "mldp_seconds": round(theirs, 4),
                "mldp_samples_per_s": round(args.mldp_records / theirs), "mldp_crashes": crashes,
                "ratio": round((args.records / ours) / (args.mldp_records / theirs), 1),
                "audit_vocab": args.audit_vocab, "mldp_gamma": thr,
                "ours_audit": a_ours.get("verdict"), "mldp_audit": a_theirs.get("verdict"),
                "mldp_audit_detail": a_theirs.get("detail"),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with open(args.out_dir / "tem_throughput.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader(); w.writerows(rows)
    with open(args.out_dir / "tem_throughput.md", "w") as f:
        f.write("# TEM sampling: ours vs mldp-text, and whether each distribution passes mdp-audit\n\n")
        f.write(f"Generated {time.strftime('%Y-%m-%dT%H:%M:%S')} by `benches/tem_bench.py {' '.join(sys.argv[1:])}` on "
                f"{os.cpu_count()} × {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
                f"mldp-text {getattr(mldp_text, '__version__', '0.1.2')}.\n\n")
        f.write("Vocabulary: first {} words of english2000 (MiniLM, 384-d), Euclidean. Ours: `mdp privatize --sampler tem` "
                "(Algorithm 3; whole command incl. reading the space; setup = the same command on no records). "
                "mldp-text: `TEM.replace_word` in a Python loop (it recomputes all distances per call). "
                "Audit: the exact distribution each samples from on the first {} words, checked by `mdp-audit`.\n\n"
                .format(len(words), args.audit_vocab))
        keys = list(rows[0].keys())
        f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(r[k]) for k in keys) + " |\n")
    print(f"wrote {args.out_dir / 'tem_throughput.md'}")


if __name__ == "__main__":
    main()
