"""Drives the browser build (build-web/site) in headless Chromium over the DevTools protocol: the local
server with the isolation headers (tools/web_serve.py), a fresh browser profile, pages opened by link,
the page's state (maskscope_web_state), screenshots. Shared by the page's test (web_page_test.py) and
its benchmark (tools/web_bench.py)."""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

import websocket  # python3-websocket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class BrowserUnavailable(Exception):
    """Chromium could not start here (the test then skips, saying so)."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """tools/web_serve.py on a free port; isolated=False leaves the COOP/COEP headers out (the one-thread page)."""

    def __init__(self, site, isolated=True):
        self.port = free_port()
        flags = ["-q"] + ([] if isolated else ["--no-isolation"])
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tools", "web_serve.py"), site,
                                      str(self.port)] + flags, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/index.html", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        self.close()
        raise RuntimeError("the local web server did not start")

    def url(self, query=""):
        return f"http://localhost:{self.port}/index.html" + (f"?{query}" if query else "")

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Browser:
    """One headless Chromium with WebGL 2 through SwiftShader, driven through one page target."""

    def __init__(self, width=1280, height=800):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            raise BrowserUnavailable("chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="maskscope-chromium-")
        args = [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-gpu-sandbox", "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            if self.proc.poll() is not None:
                self.close()
                raise BrowserUnavailable(f"chromium exited with code {self.proc.returncode} at start")
            time.sleep(0.1)
        else:
            self.close()
            raise BrowserUnavailable("chromium did not open its DevTools port in 30 s")
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)
        # Downloads land in the profile (the export test reads them there).
        self.downloads = os.path.join(self.profile, "downloads")
        os.makedirs(self.downloads)
        self.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=self.downloads)

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            return None
        return r["result"].get("value")

    def open(self, url):
        self.call("Page.navigate", url=url)

    def state(self):
        """The page's state (web_page.cpp after_frame), or None before the module runs."""
        text = self.evaluate("typeof Module !== 'undefined' && Module.calledRun ? "
                             "Module.ccall('maskscope_web_state', 'string', [], []) : null")
        state = json.loads(text) if text else None
        return state if state and "finished" in state else None  # "{}" until the first frame

    def wait_for(self, predicate, timeout, what):
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            last = self.state()
            if last is not None and predicate(last):
                return last
            time.sleep(0.1)
        raise TimeoutError(f"waited {timeout} s for {what}; last state: {last}")

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8] == 8 and body[9] in (2, 6), "8-bit RGB or RGBA only"
            channels = 3 if body[9] == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        prev = line
    return width, height, rows
