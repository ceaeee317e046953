#!/usr/bin/env python3
"""The DaemonSet manifest (packaging/daemonset.yaml): it parses, and the daemon it starts can read
what it is told to watch.

Checks: every document is YAML with apiVersion and kind; the container runs `triage watch`; each
folder the daemon watches (its command-line folders and the ConfigMap's [watch] folders) lies
under a read-only mount of the same host path; /var/log/pods, /var/log/containers and
/var/log/kern.log are mounted read-only, /dev/kmsg only in a privileged pod (a container's device
cgroup refuses it otherwise); the store is a writable hostPath holding the database the daemon is
given; the NVIDIA runtime is selected; NODE_NAME comes from spec.nodeName; the scrape annotations,
the PodMonitor and the /healthz probes name the port the configuration listens on, which is not
9400 (dcgm-exporter's).

Usage: daemonset_test.py MANIFEST
"""
import sys
import tomllib

import yaml


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


# triage watch's options that take a value (the rest are flags); `triage watch --help` names them.
VALUED = {"--db", "--config", "--rules", "--include", "--exclude", "--quiet-gap", "--settle",
          "--heartbeat", "--log-level", "--metrics", "--host", "--color"}


def watch_arguments(args):
    """The folders and the option values of `watch ARGS`."""
    folders, options = [], {}
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--") and "=" in a:
            name, value = a.split("=", 1)
            options[name] = value
        elif a in VALUED:
            if i + 1 >= len(args):
                fail(f"{a} without a value")
            options[a] = args[i + 1]
            i += 1
        elif not a.startswith("-"):
            folders.append(a)
        i += 1
    return folders, options


def under(path, mount):
    return path == mount or path.startswith(mount.rstrip("/") + "/")


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    for d in docs:
        if "apiVersion" not in d or "kind" not in d:
            fail(f"a document without apiVersion/kind: {d}")
    by_kind = {d["kind"]: d for d in docs}
    ds = by_kind.get("DaemonSet") or fail("no DaemonSet")
    pod = ds["spec"]["template"]
    spec = pod["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == "triage"]
    args = container.get("command", []) + container.get("args", [])
    if args[:1] != ["watch"]:
        fail(f"the container does not run `triage watch`: {args}")
    folders, options = watch_arguments(args[1:])

    configmap = by_kind.get("ConfigMap") or fail("no ConfigMap")
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = container["volumeMounts"]
    config_path = options.get("--config") or fail("the daemon is given no --config")
    config_text = None
    for m in mounts:
        v = volumes[m["name"]]
        if "configMap" in v and under(config_path, m["mountPath"]):
            if v["configMap"]["name"] != configmap["metadata"]["name"]:
                fail("the configuration mount names another ConfigMap")
            key = config_path[len(m["mountPath"].rstrip("/")) + 1:]
            config_text = configmap["data"].get(key) or fail(f"the ConfigMap has no {key}")
    if config_text is None:
        fail(f"{config_path} is on no ConfigMap mount")
    config = tomllib.loads(config_text)
    folders += config.get("watch", {}).get("folders", [])
    if not folders:
        fail("the daemon watches no folder")

    def host_mount(path):
        """The mount holding `path`, with its hostPath volume; fails when there is none."""
        best = None
        for m in mounts:
            if under(path, m["mountPath"]) and (best is None or len(m["mountPath"]) > len(best["mountPath"])):
                best = m
        if best is None:
            fail(f"{path} is not mounted")
        v = volumes[best["name"]]
        if "hostPath" not in v:
            fail(f"{path} is mounted from {v}, not the node")
        return best, v["hostPath"]

    privileged = container.get("securityContext", {}).get("privileged") is True
    kmsg_mounted = any(under("/dev/kmsg", m["mountPath"]) for m in mounts)
    if kmsg_mounted and not privileged:
        fail("/dev/kmsg is mounted in a pod that is not privileged: its device cgroup refuses it")
    for path in folders + ["/var/log/pods", "/var/log/containers", "/var/log/kern.log"]:
        m, host = host_mount(path)
        if m.get("readOnly") is not True:
            fail(f"{path} is mounted writable")
        # The kubelet's links in /var/log/containers name /var/log/pods/...: same paths inside.
        if host["path"] != m["mountPath"]:
            fail(f"{path}: node path {host['path']} mounted at {m['mountPath']}")

    db = options.get("--db") or config.get("store", {}).get("path") or fail("no database path")
    m, host = host_mount(db)
    if m.get("readOnly"):
        fail(f"the store {db} is read-only")
    if host.get("type") != "DirectoryOrCreate":
        fail("the store's hostPath is not DirectoryOrCreate")

    if spec.get("runtimeClassName") != "nvidia":
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        if "NVIDIA_VISIBLE_DEVICES" not in env:
            fail("neither the NVIDIA runtime class nor NVIDIA_VISIBLE_DEVICES")

    annotations = pod["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/scrape") != "true":
        fail("no prometheus.io/scrape annotation")
    port = annotations.get("prometheus.io/port") or fail("no prometheus.io/port annotation")
    listen = options.get("--metrics") or config.get("metrics", {}).get("listen") or fail("no metrics address")
    if listen.rsplit(":", 1)[1] != port:
        fail(f"metrics listen on {listen}, annotation says port {port}")
    ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    if int(port) not in ports.values():
        fail(f"port {port} is not a containerPort")
    if int(port) == 9400:
        fail("metrics on 9400, dcgm-exporter's default port on the same nodes")
    port_name = [n for n, p in ports.items() if p == int(port)][0]

    env = {e["name"]: e for e in container.get("env", [])}
    node = env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if node != "spec.nodeName":
        fail(f"NODE_NAME does not come from spec.nodeName: {env.get('NODE_NAME')}")

    for probe in ("livenessProbe", "readinessProbe"):
        get = container.get(probe, {}).get("httpGet") or fail(f"no {probe} over http")
        if get.get("path") != "/healthz" or get.get("port") not in (port_name, int(port)):
            fail(f"{probe} is not /healthz on the metrics port: {get}")

    monitor = by_kind.get("PodMonitor") or fail("no PodMonitor")
    labels = pod["metadata"].get("labels", {})
    wanted = monitor["spec"]["selector"].get("matchLabels", {})
    if not wanted or any(labels.get(k) != v for k, v in wanted.items()):
        fail(f"the PodMonitor selects {wanted}, the pods are labelled {labels}")
    endpoints = monitor["spec"].get("podMetricsEndpoints", [])
    if not any(e.get("port") == port_name and e.get("path", "/metrics") == "/metrics" for e in endpoints):
        fail(f"the PodMonitor does not scrape /metrics on port {port_name}: {endpoints}")
    print(f"ok: watches {folders} read-only, store {db}, metrics {listen}")


if __name__ == "__main__":
    main()
