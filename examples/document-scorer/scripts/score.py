#!/usr/bin/env python3
"""Score input documents; runs inside the skillrun sandbox."""
import csv
import os
import re
import sys

INPUTS = "/workspace/inputs"
BUNDLE = os.path.join(INPUTS, "bundle")
OUT = "/workspace/outputs/scores.csv"


def syllables(word):
    groups = re.findall(r"[aeiouy]+", word.lower())
    return max(1, len(groups) - (1 if word.lower().endswith("e") and len(groups) > 1 else 0))


def score(text, keywords):
    words = re.findall(r"[A-Za-z']+", text)
    sentences = max(1, len(re.findall(r"[.!?]+", text)))
    n = max(1, len(words))
    syl = sum(syllables(w) for w in words)
    flesch = 206.835 - 1.015 * (n / sentences) - 84.6 * (syl / n)
    lower = {w.lower() for w in words}
    coverage = sum(1 for k in keywords if k in lower) / max(1, len(keywords))
    return len(words), sentences, n / sentences, flesch, coverage


def main():
    with open(os.path.join(BUNDLE, "references", "keywords.txt")) as f:
        keywords = [k.strip().lower() for k in f if k.strip()]
    rows = []
    for name in sorted(os.listdir(INPUTS)):
        path = os.path.join(INPUTS, name)
        if name == "bundle" or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            words, sents, avg, flesch, cov = score(f.read(), keywords)
        rows.append((name, words, sents, round(avg, 1), round(flesch, 1), round(cov, 2)))
    if not rows:
        print("no input documents: pass some with skillrun -i FILE", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r[5], r[4]), reverse=True)
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["document", "words", "sentences", "avg_sentence", "reading_ease", "keyword_coverage"])
        w.writerows(rows)
    for r in rows:
        print(f"{r[0]:30} ease {r[4]:6.1f}  keywords {r[5]:.0%}")
    print(f"wrote {OUT} ({len(rows)} documents)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
