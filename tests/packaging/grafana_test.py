#!/usr/bin/env python3
"""packaging/grafana/triage-dashboard.json: it parses, every query names a metric that the daemon
exports (read from the textfile a running `triage watch` writes), with labels that metric has
(docs/metrics.md) or Prometheus gives every target; with promtool, every query parses as PromQL.

  grafana_test.py TRIAGE SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

TRIAGE, ROOT = sys.argv[1], sys.argv[2]
DASHBOARD = os.path.join(ROOT, "packaging/grafana/triage-dashboard.json")
TARGET_LABELS = {"instance", "job"}  # Prometheus' own, on every scraped series
# Grafana's variables, as a query would hold them once Grafana has put their values in.
VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$host": ".*"}
PROMQL_WORDS = {"sum", "by", "without", "increase", "rate", "max", "min", "count", "topk",
                "sort_desc", "time", "bool", "on", "ignoring", "group_left", "avg"}


def exported_families():
    """The families a running daemon writes, from its textfile."""
    work = tempfile.mkdtemp(prefix="triage-grafana-")
    try:
        os.mkdir(os.path.join(work, "logs"))
        prom = os.path.join(work, "triage.prom")
        with open(os.path.join(work, "config.toml"), "w") as f:
            f.write(f'[metrics]\ntextfile = "{prom}"\n')
        daemon = subprocess.Popen([TRIAGE, "watch", "--config", os.path.join(work, "config.toml"),
                                   "--db", os.path.join(work, "t.db"), os.path.join(work, "logs")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, HOME=work))
        try:
            deadline = time.time() + 30
            while not os.path.exists(prom) and time.time() < deadline:
                time.sleep(0.1)
            with open(prom, encoding="utf-8") as f:
                text = f.read()
        finally:
            daemon.terminate()
            daemon.wait(20)
        return set(re.findall(r"^# TYPE (\w+) ", text, re.M))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def documented_labels():
    """Each family's labels, from the table of docs/metrics.md."""
    labels = {}
    with open(os.path.join(ROOT, "docs/metrics.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `(triage_\w+)` \| \w+ \| ([^|]*)\|", line)
            if m:  # the label names, without the values some list in brackets
                labels[m.group(1)] = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", m.group(2))))
    return labels


def queries(dashboard):
    out = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for v in dashboard["templating"]["list"]:
        if v.get("type") == "query":
            out.append(v["definition"])
    return out


def substituted(expr):
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    return expr


class Dashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD, encoding="utf-8") as f:
            cls.dashboard = json.load(f)
        cls.exported = exported_families()
        cls.labels = documented_labels()

    def test_the_daemon_exports_families_and_the_docs_list_them(self):
        self.assertIn("triage_incidents_total", self.exported)
        self.assertEqual(set(self.labels), self.exported)

    def test_every_query_names_an_exported_metric(self):
        exprs = queries(self.dashboard)
        self.assertGreaterEqual(len(exprs), 10)
        used = set()
        for expr in exprs:
            names = set(re.findall(r"\btriage_\w+", expr))
            self.assertTrue(names, "a query without a triage metric: " + expr)
            for name in names:
                self.assertIn(name, self.exported, expr)
            used |= names
        # Every family the daemon exports has a panel.
        self.assertEqual(used, self.exported)

    def test_every_label_is_the_metrics_own_or_the_targets(self):
        for expr in queries(self.dashboard):
            names = set(re.findall(r"\btriage_\w+", expr))
            allowed = set(TARGET_LABELS)
            for name in names:
                allowed |= self.labels[name]
            used = set()
            for group in re.findall(r"\bby \(([^)]*)\)", expr):
                used |= {w.strip() for w in group.split(",")}
            used |= set(re.findall(r"(\w+)=~?\"", expr))
            m = re.match(r"label_values\(\w+, (\w+)\)", expr)
            if m:
                used.add(m.group(1))
            self.assertLessEqual(used, allowed, expr)

    def test_panels_have_distinct_ids_and_a_prometheus_datasource_variable(self):
        ids = [p["id"] for p in self.dashboard["panels"]]
        self.assertEqual(len(ids), len(set(ids)))
        kinds = {v["name"]: v["type"] for v in self.dashboard["templating"]["list"]}
        self.assertEqual(kinds.get("datasource"), "datasource")
        for p in self.dashboard["panels"]:
            self.assertEqual(p["datasource"]["uid"], "${datasource}", p["title"])

    def test_every_query_parses_as_promql(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool is not installed (scripts/deps.sh --tests installs prometheus)")
        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query{i}", "expr": substituted(e)}
            for i, e in enumerate(queries(self.dashboard)) if not e.startswith("label_values")]}]}
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            json.dump(rules, f)  # JSON is YAML
        try:
            r = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
