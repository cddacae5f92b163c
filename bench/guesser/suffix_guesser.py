#!/usr/bin/python3
"""A TnT-style suffix guesser on a CoNLL-U split, for issue 30's question:
would an unknown-word guesser give the tagger better candidate sets than
its zeroth-order pruner?

It learns P(tag | suffix) from the training words seen at most 10 times
(Brants 2000: rare words behave like unknown ones), lower-cased suffixes of
up to 8 characters, combined by successive abstraction with theta the
standard deviation of the tag probabilities, and prints, for the test
tokens whose form training never saw, how often the gold tag is among the
K best guesses.

    /usr/bin/python3 bench/guesser/suffix_guesser.py TRAIN.conllu TEST.conllu [COLUMN]

COLUMN is the label column, 4 (XPOS, the default) or 3 (UPOS).
"""
import collections
import math
import sys

MAX_SUFFIX, RARE = 8, 10


def read(path, col):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        c = line.split("\t")
        if "-" in c[0] or "." in c[0]:
            continue
        out.append((c[1], c[col]))
    return out


def main():
    col = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    train, test = read(sys.argv[1], col), read(sys.argv[2], col)
    freq = collections.Counter(w for w, _ in train)
    suffix = collections.defaultdict(collections.Counter)
    tags = collections.Counter()
    for w, t in train:
        if freq[w] > RARE:
            continue
        lw = w.lower()
        tags[t] += 1
        for k in range(1, min(MAX_SUFFIX, len(lw)) + 1):
            suffix[lw[-k:]][t] += 1
    n = sum(tags.values())
    p0 = {t: c / n for t, c in tags.items()}
    theta = math.sqrt(sum((p - 1 / len(p0)) ** 2 for p in p0.values()) / (len(p0) - 1))

    def guess(w):
        lw, p = w.lower(), dict(p0)
        for k in range(1, min(MAX_SUFFIX, len(lw)) + 1):
            c = suffix.get(lw[-k:])
            if c is None:
                break
            m = sum(c.values())
            p = {t: (c.get(t, 0) / m + theta * p.get(t, 0)) / (1 + theta) for t in set(p) | set(c)}
        return [t for t, _ in sorted(p.items(), key=lambda x: -x[1])]

    unknown = [(w, t) for w, t in test if w not in freq]
    print(f"test tokens {len(test)}, unknown {len(unknown)} ({100 * len(unknown) / len(test):.1f} %)")
    ranked = [(t, guess(w)) for w, t in unknown]
    for k in (1, 3, 5, 8, 12):
        hit = sum(t in g[:k] for t, g in ranked)
        print(f"K = {k:2d}: gold tag among the K best guesses for {100 * hit / len(unknown):.2f} % of unknown tokens")


if __name__ == "__main__":
    main()
