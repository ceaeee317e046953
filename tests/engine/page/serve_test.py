#!/usr/bin/env python3
"""`triage serve` over a store filled by triage itself: a four-rank job and 50 incidents on five
hosts, one of whose log lines holds a <script> element.

  serve_test.py TRIAGE OUTDIR access    the token and the read-only server (curl-free: urllib)
  serve_test.py TRIAGE OUTDIR browser   the pages in a headless Chromium: DOM checks and
                                        screenshots kept in OUTDIR; exits 77 (skipped) without
                                        chromium
"""
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

TRIAGE, OUTDIR, PART = sys.argv[1], sys.argv[2], sys.argv[3]
HOSTILE = "<script>alert(1)</script>"

# What the 50 services fail with: a traceback each, the last line the cause's.
FAILURES = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free.",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.21.5",
]


def job_log():
    lines = ['[rank1]:Traceback (most recent call last):',
             '[rank1]:  File "/app/train.py", line 40, in <module>',
             "[rank1]:" + FAILURES[0]]
    for rank, second in [(0, "05"), (2, "06"), (3, "07")]:
        p = f"[rank{rank}]:[E1102 09:14:{second}.100000000 ProcessGroupNCCL.cpp:"
        lines.append(p + f"616] [Rank {rank}] Watchdog caught collective operation timeout: "
                     "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                     "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.")
        lines.append(p + f"630] [Rank {rank}] To avoid data inconsistency, we are taking the "
                     "entire process down.")
    return "\n".join(lines) + "\n"


def service_log(n):
    day = 1 + n % 5
    last = FAILURES[n % len(FAILURES)] + (" " + HOSTILE if n == 7 else "")
    return (f"2026-12-0{day} 10:00:00 INFO service {n} starting\n"
            f"2026-12-0{day} 10:00:05 ERROR Traceback (most recent call last):\n"
            f'  File "/app/server.py", line {10 + n}, in <module>\n'
            "    main()\n" + last + "\n")


class Store:
    """A temporary store filled through `triage analyze`, and `triage serve` over it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="triage-serve-")
        self.db = os.path.join(self.dir, "t.db")
        self.env = dict(os.environ, HOME=self.dir, XDG_CONFIG_HOME=self.dir, TRIAGE_PAGER="cat")
        self.analyze("node-1", {"train.log": job_log()})
        for host in range(5):
            self.analyze(f"node-{host + 1}", {f"svc-{n:02d}.log": service_log(n)
                                            for n in range(host * 10, host * 10 + 10)})
        self.server = None

    def analyze(self, host, files):
        paths = []
        for name, text in files.items():
            path = os.path.join(self.dir, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        subprocess.run([TRIAGE, "analyze", "--db", self.db, "--host", host, *paths],
                       env=self.env, stdout=subprocess.DEVNULL, check=True)

    def serve(self, *args):
        self.server = subprocess.Popen([TRIAGE, "serve", "--db", self.db, *args], env=self.env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.server.stdout.readline()
        if not line.startswith("serving on http://"):
            raise AssertionError("serve did not start: " + line + self.server.stderr.read())
        return line.split()[-1].rstrip("/").split("//", 1)[1]  # ADDRESS:PORT

    def close(self):
        if self.server:
            self.server.terminate()
            self.server.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


class Access(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.store = Store()

    @classmethod
    def tearDownClass(cls):
        cls.store.close()

    def tearDown(self):
        if self.store.server:
            self.store.server.terminate()
            self.store.server.wait(10)
            self.store.server = None

    def test_another_address_than_loopback_needs_a_token(self):
        r = subprocess.run([TRIAGE, "serve", "--db", self.store.db, "--listen", "0.0.0.0:0"],
                           env=self.store.env, capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a loopback address", r.stderr)
        for bad in ["short", "sixteen-or-more;but-a-semicolon"]:
            r = subprocess.run([TRIAGE, "serve", "--db", self.store.db, "--token", bad],
                               env=self.store.env, capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 2, bad)

    def test_with_a_token_every_request_carries_it(self):
        token_file = os.path.join(self.store.dir, "token")
        token = "t0k3n-for-the-page-test"
        with open(token_file, "w") as f:
            f.write(token + "\n")
        address = self.store.serve("--listen", "0.0.0.0:0", "--token-file", token_file)
        url = "http://127.0.0.1:" + address.rsplit(":", 1)[1]
        self.assertEqual(get(url + "/")[0], 401)
        self.assertEqual(get(url + "/incident/1")[0], 401)
        self.assertEqual(get(url + "/", {"Authorization": "Bearer wrong-token-of-same-len"})[0], 401)
        self.assertEqual(get(url + "/?token=" + token + "x")[0], 401)
        self.assertEqual(get(url + "/?token=" + token[:-1])[0], 401)
        status, headers, body = get(url + "/incident/1", {"Authorization": "Bearer " + token})
        self.assertEqual(status, 200)
        self.assertIn("default-src 'none'", headers["Content-Security-Policy"])
        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(url + "/?cause=cuda&token=" + token, timeout=10)
            self.fail("no redirect")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.code, 303)
            self.assertEqual(e.headers["Location"], "/?cause=cuda")
            cookie = e.headers["Set-Cookie"]
        self.assertIn("HttpOnly", cookie)
        self.assertEqual(get(url + "/", {"Cookie": cookie.split(";")[0]})[0], 200)
        # The redirect stays on this site.
        try:
            opener.open(url + "//example.com/?token=" + token, timeout=10)
            self.fail("no redirect")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.headers["Location"], "/")

    def test_show_html_is_one_self_contained_page_with_the_jobs_timeline(self):
        r = subprocess.run([TRIAGE, "show", "--db", self.store.db, "1", "--html"],
                           env=self.store.env, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        page = r.stdout
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertIn('http-equiv="Content-Security-Policy"', page)
        self.assertEqual(page.count('<g class="lane"'), 4)
        self.assertNotIn("<script", page)
        self.assertNotIn("<link", page)
        self.assertNotIn('href="/', page)  # no links into a server it is not served from
        r = subprocess.run([TRIAGE, "show", "--db", self.store.db, "1", "--html", "--json"],
                           env=self.store.env, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)

    def test_loopback_serves_without_a_token_and_writes_nothing(self):
        before = open(self.store.db, "rb").read()
        url = "http://" + self.store.serve("--listen", "127.0.0.1:0")
        status, headers, body = get(url + "/")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/html; charset=utf-8")
        self.assertEqual(body.count('<tr class="incident">'), 51)
        for method in ["POST", "PUT", "DELETE"]:
            req = urllib.request.Request(url + "/incident/1", data=b"", method=method)
            with self.assertRaises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(req, timeout=10)
            self.assertEqual(e.exception.code, 405)
        self.assertEqual(get(url + "/incident/999")[0], 404)
        self.assertEqual(open(self.store.db, "rb").read(), before)


class Dom(html.parser.HTMLParser):
    """The parsed page: its elements (tag, attributes) and the text of each class."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.text, self.stack = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag, cls=None):
        return sum(1 for t, a in self.elements
                   if t == tag and (cls is None or cls in (a.get("class") or "").split()))


class Browser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.store = Store()
        cls.url = "http://" + cls.store.serve("--listen", "127.0.0.1:0")
        cls.profile = tempfile.mkdtemp(prefix="triage-chromium-")

    @classmethod
    def tearDownClass(cls):
        cls.store.close()
        shutil.rmtree(cls.profile, ignore_errors=True)

    def chromium(self, *args):
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--user-data-dir=" + self.profile,
                            "--window-size=1280,1400", *args],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return r.stdout

    def page(self, path, shot=None):
        dom = Dom(self.chromium("--dump-dom", self.url + path))
        if not shot:
            return dom
        png = os.path.join(OUTDIR, shot)
        self.chromium("--screenshot=" + png, self.url + path)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(png), 10000)
        return dom

    def test_the_list_shows_every_incident_and_the_days_bars(self):
        dom = self.page("/", "serve-list.png")
        self.assertEqual(dom.count("tr", "incident"), 51)
        self.assertEqual(dom.count("g", "bar"), 6)  # five days of services, one of the job
        self.assertEqual(dom.count("script"), 0)

    def test_an_incident_shows_a_logs_script_element_as_text(self):
        status, _, body = get(self.url + "/?service=svc-07")
        incident = body.split('<a href="/incident/', 1)[1].split('"', 1)[0]
        dom = self.page("/incident/" + incident, "serve-incident.png")
        self.assertEqual(dom.count("script"), 0)
        self.assertTrue(any(HOSTILE in t for t in dom.text), "the line's <script> is not text")
        self.assertEqual(dom.count("section", "cause"), 1)

    def test_the_jobs_timeline_has_a_lane_per_rank(self):
        dom = self.page("/job/1", "serve-timeline.png")
        self.assertEqual(dom.count("svg", "timeline"), 1)
        self.assertEqual(dom.count("g", "lane"), 4)
        self.assertEqual(dom.count("script"), 0)

    def test_hosts_by_cause_has_a_row_per_host(self):
        dom = self.page("/hosts")
        self.assertEqual(dom.count("tr", "host"), 5)


if __name__ == "__main__":
    os.makedirs(OUTDIR, exist_ok=True)
    CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    if PART == "browser" and not CHROMIUM:
        print("skipped: chromium is not installed (scripts/deps.sh --tests installs it)")
        sys.exit(77)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Access if PART == "access" else Browser)
    sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
