#!/usr/bin/env python3
"""Prints English's most frequent words with their frequencies, for nlp's general prior.

One line per word, "word<TAB>frequency" (occurrences per word of running text, as the package
wordfreq gives it), most frequent first. build.sh pipes this through the Go analyser
(scripts/wordfreq/analyse.go), which turns words into the terms the text index sees.

  words.py [N]   the top N words (default 40000)
"""
import importlib.metadata
import sys

from wordfreq import top_n_list, word_frequency


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
    version = importlib.metadata.version("wordfreq")
    print(f"# wordfreq {version}, English, top {n} words")
    for w in top_n_list("en", n):
        f = word_frequency(w, "en")
        if f > 0:
            print(f"{w}\t{f:.6g}")


if __name__ == "__main__":
    main()
