#!/usr/bin/env python3
"""The DaemonSet's container command, run as a pod runs it: in a UTS namespace whose hostname is a
pod's name, with NODE_NAME set as the manifest's downward API sets it. The node's name, not the
pod's, must be the host of the stored incident, of its metrics and of its notification; and a
rollout (the same node, a new pod name) must find the node's checkpoints again and resume the log
where the last pod stopped, in a shared PostgreSQL store (keyed by host) when the server's
programs are here, else in SQLite.

The manifest's paths (/var/log/pods, /etc/triage, /var/lib/triage) are moved under a temporary
root; its ConfigMap's configuration is used with the store, the metrics address and a webhook (a
receiver this test starts) pointed there.

Usage: daemonset_identity_test.py TRIAGE SOURCE_DIR MANIFEST
Exit 77 (skipped) without the privilege to make a UTS namespace.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import yaml

NODE = "gpu-node-7"
PODS = ["triage-7d9f8-x2k4q", "triage-7d9f8-p9z3m"]  # before and after a rollout
PG_BIN = os.environ.get("TRIAGE_PG_BIN", "/usr/lib/postgresql/15/bin")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver(http.server.BaseHTTPRequestHandler):
    bodies = []

    def do_POST(self):
        Receiver.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def wait_for(what, check, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    fail(f"no {what} within {seconds} s")


def main():
    triage, source, manifest = sys.argv[1:4]
    if subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        print("skipped: no privilege for a UTS namespace (unshare --uts)")
        sys.exit(77)
    docs = [d for d in yaml.safe_load_all(open(manifest, encoding="utf-8")) if d]
    kinds = {d["kind"]: d for d in docs}
    (container,) = kinds["DaemonSet"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container.get("env", [])}
    if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "spec.nodeName":
        fail("the manifest does not set NODE_NAME from spec.nodeName")
    config_text = kinds["ConfigMap"]["data"]["config.toml"]

    root = tempfile.mkdtemp(prefix="triage-pod-")
    os.chmod(root, 0o755)  # the PostgreSQL server runs as nobody and needs to reach its folder
    pg = None
    try:
        # A shared store where the server is here: checkpoints are keyed by host there.
        db = None
        if os.access(os.path.join(PG_BIN, "initdb"), os.X_OK):
            pg = os.path.join(root, "pg")
            subprocess.run(["bash", os.path.join(source, "tests/engine/store/postgres_fixture.sh"), "start", pg],
                           check=True, capture_output=True)
            db = f"postgresql://triage@/postgres?host={pg}"
        args = []
        for a in container["args"]:
            if a == "/var/lib/triage/triage.db" and db:
                args.append(db)
            else:
                args.append(root + a if a.startswith("/") else a)
        db = db or root + "/var/lib/triage/triage.db"
        metrics_port, hook_port = free_port(), free_port()
        config_text = config_text.replace('"0.0.0.0:9464"', f'"127.0.0.1:{metrics_port}"')
        config_text = config_text.replace('"/var/lib/triage/triage.db"', json.dumps(db))
        config_text += f'[notify]\nwebhook = "http://127.0.0.1:{hook_port}/hook"\n'
        os.makedirs(root + "/etc/triage")
        os.makedirs(root + "/var/lib/triage")
        with open(root + "/etc/triage/config.toml", "w", encoding="utf-8") as f:
            f.write(config_text)
        log = root + "/var/log/pods/serving_sglang-0_1f2e3d4c/sglang/0.log"
        os.makedirs(os.path.dirname(log))
        lines = ["Traceback (most recent call last):",
                 '  File "/app/serve.py", line 10, in <module>',
                 "    main()",
                 "RuntimeError: CUDA error: out of memory"]
        with open(log, "w", encoding="utf-8") as f:
            for i, line in enumerate(lines):
                f.write(f"2026-12-06T10:00:0{i}.000000000Z stderr F {line}\n")

        server = http.server.HTTPServer(("127.0.0.1", hook_port), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base_env = {"PATH": "/usr/bin:/bin", "HOME": root, "NODE_NAME": NODE,
                    "TRIAGE_RULES_DIR": os.path.join(source, "rules")}

        def start(pod, extra):
            err = open(os.path.join(root, f"{pod}.log"), "w", encoding="utf-8")
            p = subprocess.Popen(["unshare", "--uts", "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh",
                                  pod, triage] + args + extra, env=base_env, stderr=err)
            return p, err.name

        def stop(p):
            p.send_signal(signal.SIGTERM)
            if p.wait(30) != 0:
                fail(f"the daemon exited {p.returncode}")

        def history():
            r = subprocess.run([triage, "history", "--json", "--db", db], env=base_env, capture_output=True, text=True)
            return json.loads(r.stdout)["incidents"] if r.returncode == 0 else []

        first, first_log = start(PODS[0], [])
        incidents = wait_for("stored incident", history)
        if [i["host"] for i in incidents] != [NODE]:
            fail(f"stored under {[i['host'] for i in incidents]}, not the node {NODE}")
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
        if f'host="{NODE}"' not in metrics or PODS[0] in metrics:
            fail(f"the metrics' host is not the node's name:\n{metrics}")
        if urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/healthz", timeout=5).status != 200:
            fail("/healthz is not ok")
        body = json.loads(wait_for("notification", lambda: Receiver.bodies and Receiver.bodies[0]))
        if body.get("host") != NODE:
            fail(f"the notification's host is {body.get('host')}, not {NODE}")
        started = open(first_log, encoding="utf-8").read()
        if f"event=host name={NODE} from=NODE_NAME" not in started:
            fail(f"the daemon does not say whose name it uses:\n{started}")
        stop(first)

        # The rollout: the same node, a new pod name. The log is resumed at its end, not re-read.
        second, second_log = start(PODS[1], ["--log-level", "debug"])
        size = os.path.getsize(log)
        opened = wait_for("file.open of the pod log", lambda: [
            l for l in open(second_log, encoding="utf-8") if "event=file.open" in l and log in l])
        if f"offset={size}" not in opened[0]:
            fail(f"after the pod's rename the log is not resumed at {size}: {opened[0]}")
        stop(second)
        if pg:
            hosts = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-At", "-d", db, "-c",
                                    "SELECT DISTINCT host FROM source_checkpoints"],
                                   capture_output=True, text=True, check=True).stdout.split()
            if hosts != [NODE]:
                fail(f"checkpoints keyed by {hosts}, not the node {NODE}")
        if len(history()) != 1 or history()[0]["occurrences"] != 1:
            fail(f"the rollout changed the store: {history()}")
        server.shutdown()
        print(f"ok: {NODE} in the store ({'PostgreSQL' if pg else 'SQLite'}), the metrics and the "
              f"notification; resumed at {size} after {PODS[0]} -> {PODS[1]}")
    finally:
        if pg:
            subprocess.run(["bash", os.path.join(source, "tests/engine/store/postgres_fixture.sh"), "stop", pg],
                           capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
