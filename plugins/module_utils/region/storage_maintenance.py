# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A storage Node's maintenance: its Ceph OSDs out and their data moved, and back in.

The controller does not reach Ceph: the monitors are on the storage pool's own network. The Ceph commands run in a
Job in the CephCluster's namespace, with the CephCluster's image, configured from what Rook keeps there (the
ConfigMap rook-ceph-mon-endpoints, key `data`, and the Secret rook-ceph-mon, keys `ceph-username` and `ceph-secret`,
as Rook's osd-purge Job reads them). The Job's script (SCRIPT) is plain Python of the Ceph image; it fails with
its reason as the container's last words, which the kubelet makes the termination message
(FallbackToLogsOnError).

The Node records the outcome - cordoned and annotated with the maintenance reason once its OSDs are out and their
data moved - so that a second run and check mode read the state without a Job.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster, hypervisor_rollout, naming

# maintenance.yml's field manager and reason, the same for a hypervisor and a storage Node.
FIELD_MANAGER = hypervisor_rollout.MAINTENANCE_FIELD_MANAGER
REASON = hypervisor_rollout.MAINTENANCE_REASON
ANNOTATION = "c5c3.io/storage-maintenance"
OUT, IN, PURGE = "out", "in", "purge"
# The exit codes of SCRIPT: refused before anything changed, and not done within the deadline.
REFUSED, NOT_DONE = 3, 4
HOSTNAME_LABEL = "kubernetes.io/hostname"

# The Job's script. Actions: out (the host's OSDs out, refused when the pools would lose a failure domain they
# need; waits until `ceph osd safe-to-destroy` says their data lives elsewhere and every PG is active+clean), in
# (back in; waits until every PG is active+clean), purge (a gone host's OSDs, out - refused if one is in - once they
# are down: `osd purge` each, then its CRUSH bucket, as Rook's RemoveOSDs does; waits until every PG is
# active+clean again).
SCRIPT = r'''
import atexit, json, os, subprocess, sys, tempfile, time

REFUSED, NOT_DONE = 3, 4


class Stop(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def client():
    mons = ",".join(m.split("=", 1)[-1] for m in os.environ["ROOK_MON_ENDPOINTS"].split(",") if m)
    user = os.environ["ROOK_CEPH_USERNAME"]
    fd, keyring = tempfile.mkstemp()
    atexit.register(os.unlink, keyring)
    os.write(fd, ("[%s]\n\tkey = %s\n" % (user, os.environ["ROOK_CEPH_SECRET"])).encode())
    os.close(fd)

    def ceph(*args, **kwargs):
        done = subprocess.run(["ceph", "--conf", "/dev/null", "--mon-host", mons, "--name", user, "--keyring",
                               keyring, "--connect-timeout", "30", "--format", "json"] + [str(a) for a in args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if kwargs.get("check", True) and done.returncode:
            raise Stop(1, "ceph %s failed (%d) %s" % (" ".join(str(a) for a in args[:3]), done.returncode,
                                                      done.stderr.strip()[-200:]))
        if not kwargs.get("check", True):
            return done.returncode
        return json.loads(done.stdout) if done.stdout.strip() else None
    return ceph


def host_osds(tree, host):
    buckets = [n for n in tree["nodes"] if n.get("type") == "host" and n.get("name") == host]
    ids = set(c for b in buckets for c in b.get("children") or [])
    return sorted(n["id"] for n in tree["nodes"] + tree.get("stray", []) if n.get("type") == "osd" and n["id"] in ids)


def rule_placement(rule):
    root, cls, domain = None, None, "osd"
    for step in rule.get("steps") or []:
        if step.get("op") == "take":
            name = step.get("item_name") or ""
            root, cls = (name.split("~", 1) + [None])[:2]
        elif step.get("op", "").startswith("choose"):
            domain = step.get("type") or domain
            break
    return root, cls, domain


def domains_left(tree, root, cls, domain, leaving):
    nodes = dict((n["id"], n) for n in tree["nodes"])
    found = set()

    def walk(node, bucket):
        if node.get("type") == domain:
            bucket = node["id"]
        if node.get("type") == "osd":
            usable = (node["id"] not in leaving and node.get("status") == "up" and node.get("reweight", 0) > 0
                      and (cls is None or node.get("device_class") == cls))
            if usable and bucket is not None:
                found.add(bucket)
            return
        for child in node.get("children") or []:
            if child in nodes:
                walk(nodes[child], bucket)

    for node in tree["nodes"]:
        if node.get("type") == "root" and (root is None or node.get("name") == root):
            walk(node, None)
    return len(found)


def short_pools(tree, pools, rules, leaving):
    by_id = dict((r["rule_id"], r) for r in rules)
    short = []
    for pool in pools:
        root, cls, domain = rule_placement(by_id.get(pool.get("crush_rule"), {}))
        left = domains_left(tree, root, cls, domain, leaving)
        if left < pool["size"]:
            short.append("pool %s (size %d) would have %d %s buckets with OSDs in" % (
                pool["pool_name"], pool["size"], left, domain))
    return short


def clean(ceph):
    stat = ceph("pg", "stat") or {}
    summary = stat.get("pg_summary", stat)
    states = summary.get("num_pg_by_state") or []
    return all(s.get("name") == "active+clean" for s in states), ", ".join(
        "%s %s" % (s.get("num"), s.get("name")) for s in states if s.get("name") != "active+clean")


def settled(ceph, ready):
    """Once ready() (the mgr has the new map), every PG whole on three polls, more than a stats period apart: the mgr's
    PG states are the OSDs' last reports."""
    seen = []

    def check():
        is_ready = ready()
        done, why = clean(ceph)
        seen.append(is_ready and done)
        return len(seen) > 2 and all(seen[-3:]), why or ("not yet" if not is_ready else "settling")
    return check


def wait(what, done, deadline):
    while True:
        finished, why = done()
        if finished:
            return
        if time.time() > deadline:
            raise Stop(NOT_DONE, "not %s in time (%s)" % (what, why))
        time.sleep(3)


def main(ceph, action, host, deadline):
    tree = ceph("osd", "tree")
    osds = host_osds(tree, host)
    if not osds:
        print("host %s has no OSDs" % host)
        return 0
    names = ["osd.%d" % o for o in osds]
    if action == "out":
        short = short_pools(tree, ceph("osd", "pool", "ls", "detail"), ceph("osd", "crush", "rule", "dump"), osds)
        if short:
            raise Stop(REFUSED, "refused to take the OSDs of %s out (%s) - %s" % (host, " ".join(names),
                                                                               " - ".join(short)))
        ceph("osd", "out", *names)

        def drained():
            # The OSDs' own report (osd df, once the mgr has the map with them out): no PG left on them; Ceph's
            # verdict that destroying them loses nothing; and every PG whole.
            held = [n["name"] for n in ceph("osd", "df")["nodes"] if n["id"] in osds and (n["reweight"] or n["pgs"])]
            safe = set((ceph("osd", "safe-to-destroy", *names) or {}).get("safe_to_destroy") or [])
            done, why = clean(ceph)
            if held or not safe >= set(osds):
                return False, "PGs still on %s%s" % (" ".join(held or names), " - " + why if why else "")
            return done, why
        wait("drained", drained, deadline)
    elif action == "in":
        ceph("osd", "in", *names)
        wait("active+clean", settled(ceph, lambda: all(
            n["reweight"] for n in ceph("osd", "df")["nodes"] if n["id"] in osds)), deadline)
    elif action == "purge":
        still_in = [n["name"] for n in tree["nodes"] if n["id"] in osds and n.get("reweight")]
        if still_in:
            raise Stop(REFUSED, "refused to purge %s - still in" % " ".join(still_in))

        def down():
            up = [n["name"] for n in ceph("osd", "tree")["nodes"] if n["id"] in osds and n.get("status") == "up"]
            return not up, "%s still up" % " ".join(up)
        wait("down", down, deadline)
        for name in names:
            ceph("osd", "purge", name, "--yes-i-really-mean-it")
        ceph("osd", "crush", "rm", host, check=False)
        # Their CRUSH weight gone, CRUSH may place some PGs anew.
        wait("active+clean", settled(ceph, lambda: True), deadline)
    print("%s of %s done" % (action, " ".join(names)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(client(), os.environ["ACTION"], os.environ["CRUSH_HOST"],
                      time.time() + int(os.environ["DEADLINE_SECONDS"])))
    except Stop as stop:
        sys.stderr.write(str(stop) + "\n")
        sys.exit(stop.code)
'''


def crush_host(node):
    """The CRUSH host bucket of a Node's OSDs: its kubernetes.io/hostname label (else its name), dots made dashes
    (Rook: normalizeHostname, client.NormalizeCrushName)."""
    meta = node.get("metadata") or {}
    return ((meta.get("labels") or {}).get(HOSTNAME_LABEL) or meta.get("name") or "").replace(".", "-")


def owner(node, reason=REASON):
    """Who holds the storage Node in maintenance: None, "ours" (this reason), or the other holder's reason."""
    held = ((node.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    if held is None:
        return None
    return "ours" if held == reason else held


def is_done(node, reason=REASON):
    """Whether the Node is in this maintenance: annotated with the reason (written once its OSDs were out and their
    data moved) and cordoned."""
    return owner(node, reason) == "ours" and bool((node.get("spec") or {}).get("unschedulable"))


def node_manifest(name, on, reason=REASON):
    """The fields the maintenance owns on the Node: cordoned with the reason, or none (applied without them, they
    go)."""
    manifest = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if on:
        manifest["metadata"]["annotations"] = {ANNOTATION: reason}
        manifest["spec"] = {"unschedulable": True}
    return manifest


def job_name(action, host):
    return "ceph-osd-%s-%s" % (action, hashlib.sha256(host.encode()).hexdigest()[:10])


def job_manifest(action, host, image, deadline, namespace=naming.ROOK_NAMESPACE, pod_annotations=None):
    """The Job that runs SCRIPT's action on the host's OSDs, at most deadline seconds."""
    labels = {"app.kubernetes.io/name": "ceph-osd-" + action, naming.MANAGED_BY_LABEL: naming.MANAGED_BY}
    env = [{"name": "ACTION", "value": action}, {"name": "CRUSH_HOST", "value": host},
           {"name": "DEADLINE_SECONDS", "value": str(int(deadline))},
           {"name": "SCRIPT", "value": SCRIPT},
           {"name": "ROOK_MON_ENDPOINTS", "valueFrom": {"configMapKeyRef": {
               "name": ceph_cluster.MON_ENDPOINTS, "key": "data"}}},
           {"name": "ROOK_CEPH_USERNAME", "valueFrom": {"secretKeyRef": {
               "name": ceph_cluster.MON_SECRET, "key": "ceph-username"}}},
           {"name": "ROOK_CEPH_SECRET", "valueFrom": {"secretKeyRef": {
               "name": ceph_cluster.MON_SECRET, "key": "ceph-secret"}}}]
    template_meta = {"labels": dict(labels)}
    if pod_annotations:
        template_meta["annotations"] = dict(pod_annotations)
    container = {"name": "ceph", "image": image, "command": ["/bin/sh", "-ec", 'exec python3 -c "$SCRIPT"'],
                 "env": env, "terminationMessagePolicy": "FallbackToLogsOnError"}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name(action, host), "namespace": namespace, "labels": labels,
                         "annotations": {"c5c3.io/crush-host": host}},
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": int(deadline) + 60,
                     "template": {"metadata": template_meta, "spec": {
                         "restartPolicy": "Never", "containers": [container]}}}}


def pod_message(pods):
    """The termination message of the Job's pod (its container's last words), or None."""
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            terminated = (status.get("state") or {}).get("terminated") or {}
            if terminated.get("message"):
                return terminated["message"].strip()
    return None


def cluster_image(cluster):
    """The Ceph image the CephCluster runs (spec.cephVersion.image)."""
    return ((cluster.get("spec") or {}).get("cephVersion") or {}).get("image")
