#!/usr/bin/env python3
"""Where in a CodiEsp note the evidence for its top-k diagnosis codes first appears.

CodiEsp's {split}X.tsv gives, for every code of a note, the character span(s) of the words the
annotators coded it from, in the Spanish original (text_files/). This prints, over the (note,
code) pairs of a split whose code is among the k most frequent diagnosis codes on train (LS-50
for k = 50, as `--task codiesp`), the relative position of the code's first evidence span
(start offset / note length in characters): quartiles and the shares in the first fifth, the
first half and the last fifth of the note. A recurrent model that reads the note forwards and
predicts from its last state must carry that evidence to the end; one that reads it backwards
meets it near its end. (Analysis only: the build and the tests do not use it. Standard library.)

    tools/codiesp_evidence_positions.py [--data DIR] [--top K] [--split test]
"""
import argparse
import collections
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data", "codiesp"))
    ap.add_argument("--top", type=int, default=50)
    ap.add_argument("--split", default="test", choices=["train", "dev", "test"])
    args = ap.parse_args()
    root = args.data
    inner = os.path.join(root, "final_dataset_v4_to_publish")
    if os.path.isdir(inner):
        root = inner
    counts = collections.Counter()
    with open(os.path.join(root, "train", "trainD.tsv"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 2:
                counts[fields[1]] += 1
    # Ties broken by code, as the loader does (most frequent first, then lexicographic).
    top = {c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: args.top]}

    first = {}
    path = os.path.join(root, args.split, args.split + "X.tsv")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 5:
                sys.exit(f"{path}:{n}: expected 5 tab-separated fields, got {len(fields)}")
            doc, kind, code, _, spans = fields[:5]
            if kind != "DIAGNOSTICO" or code not in top:
                continue
            start = min(int(s.split()[0]) for s in spans.split(";"))
            key = (doc, code)
            first[key] = min(first.get(key, start), start)
    rel = []
    for (doc, _), start in first.items():
        with open(os.path.join(root, args.split, "text_files", doc + ".txt"), encoding="utf-8") as f:
            rel.append(start / max(1, len(f.read())))
    if not rel:
        sys.exit(f"{path}: no evidence span for a top-{args.top} diagnosis code")
    rel.sort()

    def q(p):
        return rel[int(p * (len(rel) - 1))]

    def share(pred):
        return sum(1 for r in rel if pred(r)) / len(rel)

    print(f"{args.split}: {len(rel)} (note, code) pairs of the top {args.top} diagnosis codes")
    print(f"first evidence at: q25 {q(0.25):.2f}, median {q(0.5):.2f}, q75 {q(0.75):.2f} "
          f"of the note")
    print(f"in the first fifth {share(lambda r: r < 0.2):.2f}, first half "
          f"{share(lambda r: r < 0.5):.2f}, last fifth {share(lambda r: r >= 0.8):.2f}")


if __name__ == "__main__":
    main()
