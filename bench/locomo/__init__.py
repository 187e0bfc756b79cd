"""Retrieval-quality benchmark on LoCoMo: evidence recall within a token budget.

    python -m bench.locomo build OUT_DIR [--variant turns|turns+observations] [--data JSON]
    python -m bench.locomo eval OUT_DIR [--methods bm25,lexical] [--budgets 500,1000,2000,4000]
                                [--k 60] [--out bench/results/locomo.json] [--embed-model GGUF]

(from the repository's root; ``python bench/locomo ...`` works too). ``build`` turns each LoCoMo
conversation into a gitmem workspace (``build``), after reading the dataset and counting its
known flaws (``dataset``); ``eval`` asks every method (``methods``) each question and scores the
evidence read within each token budget (``evaluate``). ``cli`` is the command line.

Data: ``../shared/bench/locomo-dev.json`` (LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0; research
and benchmarking only).
"""
