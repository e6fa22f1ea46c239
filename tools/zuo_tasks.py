#!/usr/bin/env python3
"""Writes the inputs of Zuo et al.'s four synthetic tasks (`003` Sec. 4.2) as maskscope token files.

One prompt per line, as characters (`--tokens-format chars`: printable ASCII, token id = character code - 32;
docs/model.md section 11). Each task's prompts all have the task's full length, so that one `--n` fits
every line; 256 prompts per task, as the paper averages Table 1 and Table 6 over 256 samples.

    addition  "123+456="              3-digit + 3-digit (100..999), 8 characters
    reversal  "rev(1234567890123456)=" 16 digits, the first nonzero, 22 characters
    indexing  "wherex(134504392,4)="  9 digits and one digit that occurs in them, 20 characters
    ordering  "order(67812,28716)="   5 distinct digits and a permutation of them, 19 characters

The formats follow the paper's own examples. Where the paper's stated length differs (Addition: 9,
Ordering: 18; "maximum and 90% of the time") the example's is used, and every prompt has the maximum length
(the paper mixes in shorter ones, such as "12+45"). Standard library only.

    python3 tools/zuo_tasks.py            # (re)writes assets/tokens/zuo-*.txt
    python3 tools/zuo_tasks.py --check    # exit 1 unless the checked-in files equal this script's output
"""

import argparse
import pathlib
import random
import sys

TASKS = ("addition", "reversal", "indexing", "ordering")
PROMPTS = 256
SEED = 2024  # one Random per task, seeded with SEED and the task's index: the files do not depend on each other


def digits(rng, count, first_nonzero=False):
    out = [str(rng.randrange(10)) for _ in range(count)]
    if first_nonzero:
        out[0] = str(rng.randrange(1, 10))
    return "".join(out)


def addition(rng):
    return f"{rng.randrange(100, 1000)}+{rng.randrange(100, 1000)}="


def reversal(rng):
    return f"rev({digits(rng, 16, first_nonzero=True)})="


def indexing(rng):
    seq = digits(rng, 9)
    return f"wherex({seq},{rng.choice(seq)})="


def ordering(rng):
    seq = rng.sample("0123456789", 5)
    perm = seq[:]
    rng.shuffle(perm)
    return f"order({''.join(seq)},{''.join(perm)})="


def task_lines(task):
    rng = random.Random(SEED * 10 + TASKS.index(task))
    make = globals()[task]
    lines = [make(rng) for _ in range(PROMPTS)]
    if len({len(line) for line in lines}) != 1:
        raise SystemExit(f"{task}: prompts of different lengths")
    return lines


def task_text(task):
    return "\n".join(task_lines(task)) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the checked-in files with this output")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent / "assets" / "tokens"),
                        help="folder of the token files (default: assets/tokens)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    stale = []
    for task in TASKS:
        path = out / f"zuo-{task}.txt"
        text = task_text(task)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            out.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"{path}: {PROMPTS} prompts of {len(task_lines(task)[0])} characters")
    if stale:
        print("stale (rerun python3 tools/zuo_tasks.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
