#!/usr/bin/python3
"""Retrain the networks of Zuo et al.'s Tables 1 and 6 ("Trained" rows) and print the table.

docs/papers.md, "Trained networks (Zuo et al. Tables 1 and 6)". For each task and seed this runs

    nice -n 10 maskscope-cli train --task TASK --d 64 --layers 6 --heads 2 --first-token fixed ...

one run at a time (the machine is shared), then measures the initial (step 0) and the last checkpoint with

    maskscope-cli run --checkpoint RUN@STEP --hidden attention --tokens builtin:zuo-TASK
                      --tokens-format chars --n PROMPT --samples 256 --seed 1 --threads 1

(the paper's reading of Table 1: the attention sublayer's output, docs/papers.md Table 4), and prints per task the
mean over seeds and the min-max between seeds of the adjacency (Table 1) and the norm adjacency (Table 6) of the
embeddings and of layers 1-6, with each run's test accuracy and wall time.

Usage: tools/zuo_trained_rows.py [--cli build/maskscope-cli] [--out DIR] [--tasks reversal,addition,...]
                                 [--steps N] [--jobs 2] [--widths 32,128] [--min-accuracy 0.9]
                                 [--table-only]   (re-read DIR's runs without training)
docs/papers.md's numbers: `tools/zuo_trained_rows.py --jobs 2 --widths 32,128` (Addition's seeds for 12000 steps, the
others' for 6000, two runs at a time on one thread each, and Table 3's widths). A finished run (done.json) is not
retrained.
Standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# Prompt lengths of the 256 evaluation prompts (docs/model.md section 11); a BOS comes in front of each.
PROMPT_N = {"addition": 8, "reversal": 22, "indexing": 20, "ordering": 19}
SEEDS = {"reversal": [1, 2, 3], "addition": [1, 2, 3], "indexing": [1, 2], "ordering": [1, 2]}
# Run order: one seed of every task first, so that a cut-short session still has every task.
ORDER = [("reversal", 1), ("addition", 1), ("indexing", 1), ("ordering", 1),
         ("reversal", 2), ("addition", 2), ("indexing", 2), ("ordering", 2), ("reversal", 3),
         ("addition", 3)]  # a third Addition seed: seed 1 stayed below 90% (docs/papers.md)

WIDTH = 64
NET = ["--layers", "6", "--first-token", "fixed"]
# Addition learns late (at 3000-5500 steps in the runs that learned in 6000) and 2 of 3 seeds had not at 6000.
STEPS = {"reversal": 6000, "addition": 12000, "indexing": 6000, "ordering": 6000}
BASE_STEPS = 6000  # a run folder's name says its steps when they are not these
TRAIN = ["--batch", "64", "--lr", "3e-3", "--warmup", "100", "--threads", "1", "--eval-every", "500",
         "--eval-sequences", "1000", "--checkpoint-every", "1000000"]

# Zuo et al. (003) Table 1, as published (embeddings, layers 1-6).
PAPER = {
    "addition": ([0.47, 0.99, 1.00, 1.00, 1.00, 1.00, 1.00], [0.48, 0.95, 0.98, 0.99, 0.98, 0.88, 0.85]),
    "reversal": ([0.49, 0.97, 0.99, 0.99, 0.99, 0.99, 0.99], [0.58, 0.91, 0.98, 0.99, 0.88, 0.82, 0.83]),
    "indexing": ([0.49, 0.98, 0.99, 0.99, 0.99, 0.99, 0.99], [0.55, 0.80, 0.96, 0.96, 0.88, 0.79, 0.83]),
    "ordering": ([0.49, 0.98, 1.00, 1.00, 1.00, 1.00, 1.00], [0.56, 0.89, 0.98, 0.96, 0.77, 0.80, 0.76]),
}


def run_dir(out, task, seed, steps=None, width=WIDTH):
    steps = steps or STEPS[task]
    return os.path.join(out, f"{task}-seed{seed}" + (f"-steps{steps}" if steps != BASE_STEPS else "")
                        + (f"-d{width}" if width != WIDTH else ""))


def train(cli, out, task, seed, steps=None, width=WIDTH):
    """Starts the run (a Popen to wait for), or None when it has finished before."""
    folder = run_dir(out, task, seed, steps, width)
    if os.path.exists(os.path.join(folder, "done.json")):
        return None
    if os.path.exists(folder):
        subprocess.run(["rm", "-rf", folder], check=True)
    heads = str(max(1, width // 32))  # d_h 32: 2 heads at d 64 (the paper: 64 at d 384)
    cmd = ["nice", "-n", "10", cli, "train", "--task", task, "--d", str(width), *NET, "--heads", heads,
           "--steps", str(steps or STEPS[task]), *TRAIN, "--seed", str(seed), "--weight-seed", str(seed), "--out", folder,
           "--quiet"]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.Popen(cmd), folder, cmd, time.monotonic()


def finish(started):
    proc, folder, cmd, start = started
    if proc.wait() != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    with open(os.path.join(folder, "done.json"), "w") as f:
        json.dump({"wall_s": time.monotonic() - start, "command": cmd}, f)


def train_all(cli, out, runs, jobs):
    """Trains (task, seed, steps, width) runs, `jobs` at a time."""
    running = []
    for run in runs:
        started = train(cli, out, *run)
        if started:
            running.append(started)
        while len(running) >= jobs:
            finish(running.pop(0))
    for started in running:
        finish(started)


def measure(cli, out, task, seed, step, steps=None, width=WIDTH):
    folder = run_dir(out, task, seed, steps, width)
    path = os.path.join(folder, f"measure-{step}.json")
    if not os.path.exists(path):
        subprocess.run(["nice", "-n", "10", cli, "run", "--checkpoint", f"{folder}@{step}", "--hidden", "attention",
                        "--tokens", f"builtin:zuo-{task}", "--tokens-format", "chars", "--n",
                        str(PROMPT_N[task] + 1), "--samples", "256", "--seed", "1", "--threads", "1", "--out", path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(path) as f:
        j = json.load(f)
    adj = [j["embeddings"]["adjacency"]] + [layer["adjacency"] for layer in j["layers"]]
    nadj = [j["embeddings"]["norm_adjacency"]] + [layer["norm_adjacency"] for layer in j["layers"]]
    se = max([j["embeddings"]["adjacency_se"]] + [layer["adjacency_se"] for layer in j["layers"]])
    nse = max([j["embeddings"]["norm_adjacency_se"]] + [layer["norm_adjacency_se"] for layer in j["layers"]])
    return adj, nadj, se, nse


def run_summary(out, task, seed, steps=None, width=WIDTH):
    folder = run_dir(out, task, seed, steps, width)
    log = [json.loads(line) for line in open(os.path.join(folder, "log.jsonl"))]
    last = log[-1]
    first_100 = next((e["step"] for e in log if e["test_accuracy"] >= 0.9), None)
    with open(os.path.join(folder, "done.json")) as f:
        wall = json.load(f)["wall_s"]
    return last["step"], last["test_accuracy"], last["test_loss"], first_100, wall


def cells(rows):
    """Mean over seeds and min-max per column."""
    out = []
    for col in zip(*rows):
        m = statistics.fmean(col)
        out.append(f"{m:.2f} ({min(col):.2f}-{max(col):.2f})" if len(col) > 1 else f"{m:.2f}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/maskscope-cli")
    ap.add_argument("--out", default="/tmp/zuo_trained_rows")
    ap.add_argument("--tasks", default="reversal,addition,indexing,ordering")
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--steps", type=int, default=None,
                    help="optimizer steps of every run (default: 12000 for Addition, 6000 for the others)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time (each on one thread)")
    ap.add_argument("--widths", default="",
                    help="Table 3: also train Reversal seed 1 at these widths, e.g. 32,128 (d 64 is the main run)")
    ap.add_argument("--min-accuracy", type=float, default=0.9,
                    help="the Trained rows keep the seeds at or above this test accuracy (the paper: 90%%)")
    a = ap.parse_args()
    tasks = a.tasks.split(",")
    os.makedirs(a.out, exist_ok=True)
    order = [(t, s) for t, s in ORDER if t in tasks]
    steps = a.steps
    widths = [int(w) for w in a.widths.split(",") if w]
    if not a.table_only:
        train_all(a.cli, a.out, [(t, s, steps, WIDTH) for t, s in order]
                  + [("reversal", 1, steps, w) for w in widths], a.jobs)
    done = [(t, s) for t, s in order if os.path.exists(os.path.join(run_dir(a.out, t, s, steps), "done.json"))]

    print("| task | seed | steps | test accuracy | test loss | first step >= 90% | wall (s) |")
    print("|---|---|---|---|---|---|---|")
    for task, seed in sorted(done):
        step, acc, loss, first, wall = run_summary(a.out, task, seed, steps)
        print(f"| {task} | {seed} | {step} | {acc:.3f} | {loss:.4f} | {first if first is not None else 'never'} | {wall:.0f} |")
    print()
    for name, idx in (("Table 1: adjacency", 0), ("Table 6: norm adjacency", 1)):
        print(f"{name} (mean over seeds, min-max between seeds; max SE within a run of 256 prompts)\n")
        print("| task | row | embeddings | 1 | 2 | 3 | 4 | 5 | 6 | max SE |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for task in tasks:
            seeds = [s for t, s in done if t == task]
            if not seeds:
                continue
            # As the paper, the Trained row keeps the networks above the accuracy bar (--min-accuracy); a task none
            # of whose seeds reaches it shows every seed, marked.
            passed = [s for s in seeds if run_summary(a.out, task, s, steps)[1] >= a.min_accuracy]
            kept = passed or seeds
            last = run_summary(a.out, task, seeds[0], steps)[0]
            init = [measure(a.cli, a.out, task, s, 0, steps) for s in seeds]
            trained = [measure(a.cli, a.out, task, s, last, steps) for s in kept]
            if idx == 0:
                print(f"| {task} | paper Init | " + " | ".join(f"{x:.2f}" for x in PAPER[task][0]) + " | |")
            label = "" if idx == 0 else task
            print(f"| {label} | ours Init (seeds {', '.join(map(str, seeds))}) | "
                  + " | ".join(cells([m[idx] for m in init])) + f" | {max(m[2 + idx] for m in init):.3f} |")
            if idx == 0:
                print("| | paper Trained | " + " | ".join(f"{x:.2f}" for x in PAPER[task][1]) + " | |")
            which = (f"seeds {', '.join(map(str, kept))}" if passed
                     else f"seeds {', '.join(map(str, kept))}, none >= {100 * a.min_accuracy:.0f}%")
            print(f"| | ours Trained ({which}) | " + " | ".join(cells([m[idx] for m in trained]))
                  + f" | {max(m[2 + idx] for m in trained):.3f} |")
        print()
    built = [w for w in widths if os.path.exists(os.path.join(run_dir(a.out, "reversal", 1, steps, w), "done.json"))]
    if built:
        print("Table 3 (Reversal, seed 1, 6 layers, d_h 32): adjacency against the width\n")
        print("| d | heads | test accuracy | wall (s) | embeddings | 1 | 2 | 3 | 4 | 5 | 6 | max SE |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for w in sorted(built + [WIDTH]):
            step, acc, loss, first, wall = run_summary(a.out, "reversal", 1, steps, w)
            m = measure(a.cli, a.out, "reversal", 1, step, steps, w)
            print(f"| {w} | {max(1, w // 32)} | {100 * acc:.1f}% | {wall:.0f} | " + " | ".join(f"{x:.2f}" for x in m[0])
                  + f" | {m[2]:.3f} |")
        print()


if __name__ == "__main__":
    main()
