"""Benchmark (not a test) of the browser build against the native command-line tool on this machine:
samples/s at n 10 and n 50 (d 64, 4 layers, LayerNorm, the window's defaults otherwise) of the threaded page,
the one-thread page (a server without the COOP/COEP headers) and the native tool with the same thread count,
at its best level and at the portable level the page runs (MASKSCOPE_LANE_ISA=x86-64), measured back to back;
the time from opening each page to its first picture; the one-thread page's frame intervals (docs/web.md,
"Speed").
Usage: /usr/bin/python3 tools/web_bench.py [THREADS]   (after bash tools/web.sh and tools/build.sh)"""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "web"))
import web_page  # noqa: E402

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
cases = [(10, 400000), (50, 20000)]  # (n, samples): several seconds each
site = os.path.join(ROOT, "build-web", "site")


def native(n, samples, nthreads, env_extra):
    args = [os.path.join(ROOT, "build", "maskscope-cli"), "run", "--n", str(n), "--samples", str(samples),
            "--threads", str(nthreads), "--out", os.path.join(tempfile.gettempdir(), f"web_bench_{os.getpid()}.json")]
    out = subprocess.run(args, capture_output=True, text=True, check=True, env=dict(os.environ, **env_extra)).stderr
    return float(re.search(r"\(([0-9.]+) samples/s", out).group(1))


def page(isolated, query_of):
    """First picture (s) and {n: (samples/s, state)} of the page served with or without the headers."""
    server = web_page.Server(site, isolated=isolated)
    browser = web_page.Browser()
    try:
        browser.open("about:blank")
        time.sleep(1)
        t0 = time.monotonic()
        browser.open(server.url())
        browser.wait_for(lambda s: s["samples_done"] > 0, 60, "the first picture")
        first = time.monotonic() - t0
        speeds = {}
        for n, samples in cases:
            browser.open(server.url(query_of(n, samples)))
            state = browser.wait_for(lambda s: s["finished"], 900, f"n {n} to finish")
            speeds[n] = (state["samples_per_s"], state)
        return first, speeds
    finally:
        browser.close()
        server.close()


print(f"load average before: {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; {threads} threads", flush=True)
first_t, threaded = page(True, lambda n, s: f"n={n}&samples={s}&threads={threads}")
first_1, one = page(False, lambda n, s: f"n={n}&samples={s}")
print(f"first picture after opening the page (defaults, n 10): threaded {first_t:.2f} s, one-thread {first_1:.2f} s")
for n, samples in cases:
    best = native(n, samples, threads, {})
    portable = native(n, samples, threads, {"MASKSCOPE_LANE_ISA": "x86-64"})
    portable1 = native(n, samples, 1, {"MASKSCOPE_LANE_ISA": "x86-64"})
    web, state = threaded[n]
    web1, state1 = one[n]
    print(f"n {n}, {samples} samples: page {web:,.0f} ({state['threads']} threads), one-thread page {web1:,.0f} "
          f"(frame p95 {state1['frame_ms_p95']:.0f} ms), native {best:,.0f} ({threads} threads), native portable "
          f"{portable:,.0f} ({threads} threads) / {portable1:,.0f} (1 thread) samples/s; native / page "
          f"{best / web:.2f}, native portable / page {portable / web:.2f}, native portable 1 thread / one-thread "
          f"page {portable1 / web1:.2f}", flush=True)
print(f"load average after: {os.getloadavg()[0]:.1f}")
