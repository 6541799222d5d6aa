#!/usr/bin/env python3
"""Test error of a bAbI run split by how recent the question's evidence is.

Reads the per-question CSV of `memgrad eval --checkpoint RUN --scores FILE` (bAbI: split, task,
file, line, question, answer, predicted, correct) and the bAbI test file it names, and prints the
test error of the questions whose last supporting fact is the statement just before the question
("last") against those with other statements in between ("earlier", with how many). A model that
follows the most recent statement fails the second group far more often. (Analysis only: the
build and the tests do not use it. Standard library.)

    tools/babi_recency_errors.py SCORES.csv TEST_FILE
"""
import collections
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    scores, test_file = sys.argv[1], sys.argv[2]
    gap_at = {}  # line number of a question -> statements between its last supporting fact and it
    numbers = []  # the story's statement numbers so far
    with open(test_file) as f:
        for line_no, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            num, rest = raw.split(' ', 1)
            if int(num) == 1:
                numbers = []
            if '\t' not in rest:
                numbers.append(int(num))
                continue
            support = max(int(x) for x in rest.rstrip('\n').split('\t')[2].split())
            gap_at[line_no] = sum(1 for n in numbers if n > support)
    groups = collections.defaultdict(lambda: [0, 0])  # gap -> [questions, wrong]
    with open(scores) as f:
        for row in csv.DictReader(f):
            if row['split'] != 'test':
                continue
            if not row['file'].endswith(test_file.rsplit('/', 1)[-1]):
                sys.exit(f"{scores}: line for {row['file']}, not {test_file}")
            g = groups[gap_at[int(row['line'])]]
            g[0] += 1
            g[1] += row['correct'] == '0'
    total = [sum(g[0] for g in groups.values()), sum(g[1] for g in groups.values())]
    print(f"{'statements after the last supporting fact':>42}  questions  wrong  error %")
    for gap in sorted(groups):
        n, wrong = groups[gap]
        print(f"{gap:>42}  {n:>9}  {wrong:>5}  {100 * wrong / n:7.1f}")
    print(f"{'all':>42}  {total[0]:>9}  {total[1]:>5}  {100 * total[1] / max(total[0], 1):7.1f}")


if __name__ == '__main__':
    main()
