#!/usr/bin/python3
"""Cross-checks `memgrad metrics` against scikit-learn on random multi-label cases.

usage: metrics_vs_sklearn.py MEMGRAD_BINARY [--cases N] [--seed S]

Each case writes a label file and a score file (CSV, CSV with a header, or JSONL) to a temporary
directory, runs `memgrad metrics`, and compares every key of its JSON output with scikit-learn
(roc_auc_score, average_precision_score, f1/precision/recall_score with zero_division=0,
hamming_loss) and with P@k / R@k computed in numpy (ties broken by label index, lower first).
Values must agree to 1e-9. A few bad-input files must be rejected with exit code 2, nothing on
stdout and "file:line" on stderr. Prints "N passed, M failed" and exits 1 on any failure.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.metrics import (average_precision_score, f1_score, hamming_loss, precision_score,
                             recall_score, roc_auc_score)

TOLERANCE = 1e-9


def random_case(rng):
    """Returns (labels, scores, threshold, ks) with sizes and tie patterns that stress edge cases."""
    n = int(rng.choice([1, 1, 2, 3, rng.integers(4, 20), rng.integers(20, 200)]))
    num_labels = int(rng.choice([1, 1, 2, rng.integers(3, 8), rng.integers(8, 30)]))
    labels = np.zeros((n, num_labels), dtype=int)
    for j in range(num_labels):
        kind = rng.random()
        if kind < 0.1:
            continue  # no positives
        prevalence = 1.0 if kind < 0.2 else rng.uniform(0.05, 0.95)  # all positive, or mixed
        labels[:, j] = rng.random(n) < prevalence
    style = rng.integers(0, 5)
    if style == 0:
        scores = rng.random((n, num_labels))  # no ties
    elif style == 1:
        scores = np.round(rng.random((n, num_labels)), 1)  # heavy ties
    elif style == 2:
        scores = rng.integers(0, 3, (n, num_labels)).astype(float)  # very heavy ties
    elif style == 3:
        scores = rng.normal(0, 3, (n, num_labels))  # negative values, some tied near zero
        scores[rng.random((n, num_labels)) < 0.2] = 0.0
    else:  # scores that partly follow the labels, rounded
        scores = np.round(labels * rng.uniform(0, 1) + rng.random((n, num_labels)), 2)
    threshold = float(rng.choice([0.5, 0.5, 0.0, 1.0, np.round(rng.uniform(-1, 2), 1),
                                  rng.uniform(0, 1)]))
    ks = sorted({int(k) for k in rng.integers(1, num_labels + 4, int(rng.integers(1, 5)))})
    return labels, scores, threshold, ks


def write_matrix(path, matrix, fmt, rng, is_labels):
    def cell(v):
        if is_labels:
            return "1.0" if (v and rng.random() < 0.05) else str(int(v))
        return repr(float(v))

    with open(path, "w") as f:
        if fmt == "jsonl":
            if rng.random() < 0.2:
                f.write(json.dumps([f"label{j}" for j in range(matrix.shape[1])]) + "\n")
            for row in matrix:
                f.write(json.dumps([int(v) if is_labels else float(v) for v in row]) + "\n")
        else:
            if fmt == "csv_header":
                f.write(",".join(f"label_{j}" for j in range(matrix.shape[1])) + "\n")
            for row in matrix:
                f.write(",".join(cell(v) for v in row) + "\n")


def expected_metrics(labels, scores, threshold, ks):
    n, num_labels = labels.shape
    out = {"samples": n, "labels": num_labels}

    def macro(metric, eligible):
        values, skipped = [], []
        for j in range(num_labels):
            if eligible(labels[:, j]):
                values.append(metric(labels[:, j], scores[:, j]))
            else:
                skipped.append(j)
        return (float(np.mean(values)) if values else None), skipped

    both_classes = lambda y: 0 < y.sum() < len(y)
    has_positive = lambda y: y.sum() > 0
    out["auc_macro"], out["auc_skipped_labels"] = macro(roc_auc_score, both_classes)
    out["ap_macro"], out["ap_skipped_labels"] = macro(average_precision_score, has_positive)
    flat_y, flat_s = labels.ravel(), scores.ravel()
    out["auc_micro"] = float(roc_auc_score(flat_y, flat_s)) if both_classes(flat_y) else None
    out["ap_micro"] = (float(average_precision_score(flat_y, flat_s))
                       if has_positive(flat_y) else None)

    predicted = (scores >= threshold).astype(int)
    for name, fn in (("f1", f1_score), ("precision", precision_score), ("recall", recall_score)):
        for average in ("macro", "micro"):
            if num_labels == 1:  # a single column is a binary target to scikit-learn
                value = fn(labels[:, 0], predicted[:, 0], average="binary", zero_division=0)
            else:
                value = fn(labels, predicted, average=average, zero_division=0)
            out[f"{name}_{average}"] = float(value)
    out["hamming_loss"] = float(hamming_loss(labels, predicted))

    for k in ks:
        precisions, recalls = [], []
        for i in range(n):
            order = np.lexsort((np.arange(num_labels), -scores[i]))  # score desc, then index asc
            hits = labels[i, order[:k]].sum()
            precisions.append(hits / k)
            if labels[i].sum() > 0:
                recalls.append(hits / labels[i].sum())
        out[f"p@{k}"] = float(np.mean(precisions))
        out[f"r@{k}"] = float(np.mean(recalls)) if recalls else None
    return out


def compare(expected, actual):
    """Returns a list of human-readable differences (empty when they agree)."""
    diffs = []
    if set(expected) != set(actual):
        diffs.append(f"keys differ: missing {sorted(set(expected) - set(actual))}, "
                     f"unexpected {sorted(set(actual) - set(expected))}")
    for key in sorted(set(expected) & set(actual)):
        e, a = expected[key], actual[key]
        if isinstance(e, float) and isinstance(a, (int, float)) and a is not None:
            if not abs(e - a) <= TOLERANCE:
                diffs.append(f"{key}: sklearn {e!r}, memgrad {a!r} (diff {abs(e - a):.3g})")
        elif e != a:
            diffs.append(f"{key}: sklearn {e!r}, memgrad {a!r}")
    return diffs


def run_memgrad(binary, labels_path, scores_path, extra):
    return subprocess.run([binary, "metrics", "--labels", labels_path, "--scores", scores_path]
                          + extra, capture_output=True, text=True)


def check_random_case(binary, tmp, case_id, rng):
    labels, scores, threshold, ks = random_case(rng)
    fmt = str(rng.choice(["csv", "csv_header", "jsonl"]))
    ext = "jsonl" if fmt == "jsonl" else "csv"
    labels_path = os.path.join(tmp, f"case{case_id}_labels.{ext}")
    scores_path = os.path.join(tmp, f"case{case_id}_scores.{ext}")
    write_matrix(labels_path, labels, fmt, rng, is_labels=True)
    write_matrix(scores_path, scores, fmt, rng, is_labels=False)
    extra = ["--threshold", repr(threshold), "--k", ",".join(map(str, ks))]
    result = run_memgrad(binary, labels_path, scores_path, extra)
    what = (f"case {case_id} ({labels.shape[0]} samples x {labels.shape[1]} labels, {fmt}, "
            f"threshold {threshold!r}, k {ks}; files {labels_path} {scores_path})")
    if result.returncode != 0:
        return [f"{what}: exit code {result.returncode}: {result.stderr.strip()}"]
    try:
        actual = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        return [f"{what}: output is not JSON ({e}): {result.stdout[:200]!r}"]
    diffs = compare(expected_metrics(labels, scores, threshold, ks), actual)
    return [f"{what}: {d}" for d in diffs]


BAD_INPUTS = [
    # (name, labels text, scores text, scores extension, expected stderr fragment)
    ("ragged row", "1,0,1\n0,1,0\n", "0.1,0.2,0.3\n0.4,0.5\n", "csv", "scores.csv:2: expected 3 columns, found 2"),
    ("non-number cell", "1,0\n0,1\n", "0.1,abc\n0.3,0.4\n", "csv", "scores.csv:1: column 2: not a number"),
    ("NaN score", "1,0\n0,1\n", "0.1,0.2\nnan,0.4\n", "csv", "scores.csv:2: column 1: value is not finite"),
    ("infinite score", "1,0\n0,1\n", "0.1,inf\n0.3,0.4\n", "csv", "scores.csv:1: column 2: value is not finite"),
    ("label not 0/1", "1,0\n0,2\n", "0.1,0.2\n0.3,0.4\n", "csv", "labels.csv:2: column 2: label must be 0 or 1"),
    ("row counts differ", "1,0\n0,1\n1,1\n", "0.1,0.2\n0.3,0.4\n", "csv", "scores.csv: 2 data rows, but"),
    ("column counts differ", "1,0\n0,1\n", "0.1\n0.3\n", "csv", "scores.csv:1: expected 2 columns (as in"),
    ("empty file", "1,0\n", "", "csv", "scores.csv: empty file"),
    ("bad JSONL", "1,0\n", "[0.1, 0.2\n", "jsonl", "scores.jsonl:1: invalid JSON"),
    ("missing file", "1,0\n", None, "csv", "scores.csv: cannot open file"),
]


def check_bad_input(binary, tmp, name, labels_text, scores_text, ext, fragment):
    case_dir = tempfile.mkdtemp(dir=tmp)
    labels_path = os.path.join(case_dir, "labels.csv")
    scores_path = os.path.join(case_dir, f"scores.{ext}")
    with open(labels_path, "w") as f:
        f.write(labels_text)
    if scores_text is not None:
        with open(scores_path, "w") as f:
            f.write(scores_text)
    result = run_memgrad(binary, labels_path, scores_path, [])
    problems = []
    if result.returncode != 2:
        problems.append(f"exit code {result.returncode}, expected 2")
    if result.stdout:
        problems.append(f"stdout not empty: {result.stdout[:200]!r}")
    if fragment not in result.stderr:
        problems.append(f"stderr {result.stderr.strip()!r} lacks {fragment!r}")
    return [f"bad input '{name}': {p}" for p in problems]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20240)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    rng = np.random.default_rng(args.seed)
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="memgrad_metrics_")
    checks = [lambda i=i: check_random_case(binary, tmp, i, rng) for i in range(args.cases)]
    checks += [lambda c=c: check_bad_input(binary, tmp, *c) for c in BAD_INPUTS]
    for check in checks:
        problems = check()
        if problems:
            failed += 1
            for p in problems:
                print("FAIL", p)
        else:
            passed += 1
    if failed:
        print(f"(the files of the failed cases are kept in {tmp})")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
