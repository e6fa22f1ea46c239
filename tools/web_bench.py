"""Benchmark (not a test) of the browser build against the native command-line tool on this machine:
samples/s at n 10 and n 50 (d 64, 4 layers, LayerNorm, the window's defaults otherwise) with the same
thread count, and the time from opening the page to its first picture (docs/web.md, "Speed").
Usage: /usr/bin/python3 tools/web_bench.py [THREADS]   (after bash tools/web.sh and tools/build.sh)"""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "web"))
import web_page  # noqa: E402

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
cases = [(10, 400000), (50, 20000)]  # (n, samples): several seconds each
server = web_page.Server(os.path.join(ROOT, "build-web", "site"))
browser = web_page.Browser()
try:
    # First picture: from the navigation to the first state with samples on screen (default settings).
    browser.open("about:blank")
    time.sleep(1)
    t0 = time.monotonic()
    browser.open(server.url())
    browser.wait_for(lambda s: s["samples_done"] > 0, 60, "the first picture")
    print(f"first picture after opening the page: {time.monotonic() - t0:.2f} s (defaults, n 10)")
    for n, samples in cases:
        browser.open(server.url(f"n={n}&samples={samples}&threads={threads}"))
        state = browser.wait_for(lambda s: s["finished"], 600, f"n {n} to finish")
        web = state["samples_per_s"]
        out = subprocess.run([os.path.join(ROOT, "build", "maskscope-cli"), "run", "--n", str(n), "--samples",
                              str(samples), "--threads", str(threads), "--out", os.path.join(browser.profile, "native.json")],
                             capture_output=True, text=True, check=True).stderr
        native = float(re.search(r"\(([0-9.]+) samples/s", out).group(1))
        print(f"n {n}, {samples} samples, {threads} threads: web {web:,.0f} samples/s, native {native:,.0f} "
              f"samples/s, native / web {native / web:.2f}")
finally:
    browser.close()
    server.close()
