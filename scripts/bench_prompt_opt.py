"""Benchmark the cold cost of the distributional chapter's prompt optimization (the
source's Table 1) on a lab profile: the template search, then every ladder model's
greedy answers under both arms, in a fresh query cache, on one torch thread.

    python scripts/bench_prompt_opt.py [--profile default]

Writes ``bench/results/prompt_opt_cost.json`` (seconds of the search and of each task's
answers, minutes in all, the commit).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from analysis import distributional as D
from analysis.core import jsonio  # strict JSON: a missing number is null
from analysis.core.cache import QueryCache
from analysis.lab import ladder, profiles
from analysis.models import load_model

OUT = Path(__file__).resolve().parents[1] / "bench" / "results" / "prompt_opt_cost.json"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", help="the chapter's profile (default: default)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    p = D.PARAMS.resolve(args.profile)
    lab = ladder.build_lab(p["lab_profile"], family="ladder", progress=False)
    runs = D.ladder_table(lab.runs_table(), p["lab_models"])
    know = D.knowledge_task(lab.corpus)
    reas = D.reasoning_task(lab.corpus, p["n_reasoning"], seed=p["seed"])
    tasks = D.task_specs(know, reas)
    counts = D.count_corpus(lab.corpus, lab.tokenizer)
    texts = [d.text for d in lab.corpus.documents if d.copies > 0]
    n_opt = min(p["prompt_opt_problems"], len(reas))
    t0 = time.time()
    arms = {"knowledge": D.search_prompts("knowledge", tasks["knowledge"], counts.doc[False], texts),
            "reasoning": D.search_prompts("reasoning", tasks["reasoning"], counts.doc[False], texts,
                                          n=n_opt)}
    search_s = time.time() - t0
    cache = QueryCache(Path(tempfile.mkdtemp()) / "queries.sqlite")
    models = {m: load_model(profiles.model_name(p["lab_profile"], m), cache=cache) for m in runs["model"]}
    answers_s = {}
    plan = (("knowledge", D.KNOWLEDGE_TOKENS, None), ("reasoning", p["reasoning_tokens"], n_opt))
    for task, tokens, n in plan:
        gold = tasks[task]["gold"] if n is None else tasks[task]["gold"][:n]
        t = time.time()
        D.arm_answers(models, task, tasks[task], arms[task], gold, tokens, n=n)
        answers_s[task] = round(time.time() - t, 1)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rec = {"profile": args.profile, "threads": 1, "models": len(models), "reasoning_problems": n_opt,
           "search_s": round(search_s, 1), "answers_s": answers_s,
           "minutes": round((search_s + sum(answers_s.values())) / 60, 2), "commit": commit,
           "date": time.strftime("%Y-%m-%d", time.gmtime())}
    OUT.write_text(jsonio.dumps(rec, indent=1) + "\n")
    print(jsonio.dumps(rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
