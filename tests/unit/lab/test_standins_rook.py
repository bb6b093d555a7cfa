# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Rook stand-in against an in-memory API: the status Rook v1.17.9 writes, its Secrets and ConfigMap.

The lab test (tests/integration/test_storage_pools.py) drives it against the real API servers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import copy
import errno
import json
import os
import sys
import threading
import uuid

import pytest
from conftest import REPO, merge_patch as merge

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab import ceph  # noqa: E402  pylint: disable=wrong-import-position
from regionlab.standins import client, rook, settings  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import reported_while_deleted  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster  # noqa: E402


class FakeKube:
    """Objects by URL path; list of a collection path returns the objects below it (any namespace). Reads return
    copies, as an API server's responses are: a write with an older copy's resourceVersion is a conflict."""

    def __init__(self):
        self.objects = {}
        self.writes = 0
        self.version = 0

    def _collection(self, url):
        parts = url.split("/")
        return parts[:-1], parts[-1]

    def _matches(self, collection, url):
        plural = collection.split("/")[-1]
        parts = url.split("/")
        if len(parts) < 2 or parts[-2] != plural:
            return False
        prefix = collection.rsplit("/", 1)[0]
        return url.startswith(prefix + "/")

    def list(self, url):
        return [copy.deepcopy(obj) for key, obj in sorted(self.objects.items()) if self._matches(url, key)]

    def get(self, url):
        if url.endswith(("/cephclusters", "/cephblockpools")):
            return {"items": self.list(url)}
        return copy.deepcopy(self.objects.get(url))

    def _bump(self, obj):
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    def create(self, url, obj):
        key = url + "/" + obj["metadata"]["name"]
        if key in self.objects:
            return None
        obj = json.loads(json.dumps(obj))
        obj["metadata"].setdefault("uid", str(uuid.uuid4()))
        obj["metadata"].setdefault("generation", 1)
        self._bump(obj)
        self.objects[key] = obj
        self.writes += 1
        return copy.deepcopy(obj)

    def patch(self, url, obj, patch, subresource=None):
        have = self.objects.get(url)
        if have is None or have["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]:
            return None
        body = dict(patch)
        meta = body.pop("metadata", None) or {}
        merge(have, body)
        merge(have["metadata"], {k: v for k, v in meta.items() if k != "resourceVersion"})
        if "spec" in body and subresource is None:
            have["metadata"]["generation"] += 1
        self._bump(have)
        self.writes += 1
        if have["metadata"].get("deletionTimestamp") and not have["metadata"].get("finalizers"):
            del self.objects[url]  # the last finalizer gone: the API server removes it
        return copy.deepcopy(have)

    def delete(self, url):
        """As the API server deletes: an object with finalizers gets a deletionTimestamp and stays."""
        have = self.objects.get(url)
        if have is not None and have["metadata"].get("finalizers"):
            have["metadata"]["deletionTimestamp"] = "2026-12-03T00:00:00Z"
            self._bump(have)
            return have
        return self.objects.pop(url, None)


class FakeCeph:
    """The storage pool's Ceph for these tests (the lab runs the real one, lab/regionlab/ceph.py): what the stand-in
    bootstrapped, its pools, rules and users, answering the mon commands the stand-in sends."""

    def __init__(self):
        self.booted = None
        self.pools, self.rules, self.users, self.commands, self.images = {}, [], {}, [], {}
        # MDS daemons {id: (address, filesystem)}; filesystems {name: {metadata, data, settings, groups, failed}},
        # groups {name: [subvolumes]}, None the subvolumes outside a group.
        self.mdss, self.filesystems = {}, {}
        # Gateways {id: (address, port)}; RGW configuration {(level, name)}; users {uid: {display_name, caps, keys,
        # buckets}}; periods committed.
        self.gateways, self.rgw_config, self.rgw_users, self.periods = {}, set(), {}, 0

    def state(self):
        return self.booted

    def complete(self, fsid=None):
        return self.booted is not None and fsid in (None, self.booted["fsid"])

    def bootstrap(self, fsid, mon_key, admin_key, mons, hosts, osds_per_host, device_class=None):
        self.booted = {"fsid": fsid, "mons": mons, "hosts": hosts, "keys": (mon_key, admin_key),
                       "osds": [{"id": i, "host": host, "address": address} for i, (host, address) in
                                enumerate(h for h in hosts for dummy in range(osds_per_host))],
                       "device_class": device_class}
        return self.booted

    def start(self):
        pass

    def destroy(self):
        self.booted = None

    def hosts(self):
        return sorted({osd["host"] for osd in self.booted["osds"]})

    def add_host(self, host, address, osds_per_host, device_class=None):
        first = max([o["id"] for o in self.booted["osds"]] + [-1]) + 1
        made = [{"id": first + i, "host": host, "address": address} for i in range(osds_per_host)]
        self.booted["osds"] += made
        return [o["id"] for o in made]

    def remove_host(self, host):
        self.booted["osds"] = [o for o in self.booted["osds"] if o["host"] != host]

    def status(self):
        return {"fsid": self.booted["fsid"], "health": {"status": "HEALTH_OK", "checks": {}},
                "osdmap": {"num_osds": len(self.booted["osds"]), "num_up_osds": len(self.booted["osds"])},
                "pgmap": {"bytes_total": 3 << 30, "bytes_used": 1 << 20, "bytes_avail": (3 << 30) - (1 << 20)}}

    def rbd_usage(self, pool):
        return len(self.images.get(pool, [])), 0

    def remove_images(self, pool):
        return len(self.images.pop(pool, []))

    def node_addresses(self):
        return sorted({osd["address"] for osd in self.booted["osds"]})

    def mds_ids(self):
        return list(self.mdss)

    def add_mds(self, daemon_id, address, filesystem):
        self.mdss[daemon_id] = (address, filesystem)

    def remove_mds(self, daemon_id):
        del self.mdss[daemon_id]

    def rgws(self):
        return dict(self.gateways)

    def add_rgw(self, daemon_id, address, realm, zonegroup, zone):
        assert {("realm", realm), ("zonegroup", zonegroup), ("zone", zone)} <= self.rgw_config
        return self.gateways.setdefault(daemon_id, (address, 7480 + len(self.gateways)))

    def remove_rgw(self, daemon_id):
        del self.gateways[daemon_id]

    def rgw_admin(self, *args):
        self.commands.append(("radosgw-admin",) + args)
        level, verb = args[0], args[1]
        options = dict(a[2:].split("=", 1) for a in args[2:] if "=" in a)
        name = options.get("rgw-" + level)
        missing = ceph.CephError("radosgw-admin %s %s" % (level, verb), -errno.ENOENT, "not found")
        if level in ("realm", "zonegroup", "zone"):
            if ".rgw.root" not in self.pools:  # where radosgw-admin keeps them
                raise ceph.CephError("radosgw-admin %s %s" % (level, verb), -errno.ENOENT, "failed to list realms")
            if verb == "list":
                return {"realms": sorted(n for k, n in self.rgw_config if k == "realm")}
            if verb == "get" and (level, name) not in self.rgw_config:
                raise missing
            if verb == "create":
                self.rgw_config.add((level, name))
            if verb == "delete":
                self.rgw_config.discard((level, name))
            return {"name": name}
        if level == "period":
            self.periods += 1
            return {}
        if level == "bucket":
            return sorted(b for u in self.rgw_users.values() for b in u["buckets"])
        if (level, verb) == ("user", "list"):
            return sorted(self.rgw_users)
        user = self.rgw_users.get(options.get("uid"))
        if verb == "create":
            user = self.rgw_users[options["uid"]] = {
                "display_name": options["display-name"], "max_buckets": int(options["max-buckets"]), "caps": [],
                "keys": [{"user": options["uid"], "access_key": rook.cephx_key()[:20],
                          "secret_key": rook.cephx_key()}], "buckets": []}
        elif user is None:
            raise missing
        elif level == "caps":
            caps = dict(c.split("=") for c in options["caps"].split(";"))
            user["caps"] = [c for c in user["caps"] if c["type"] not in caps]
            if verb == "add":
                user["caps"] += [{"type": t, "perm": p} for t, p in sorted(caps.items())]
        elif verb == "rm":
            if user["buckets"]:
                raise ceph.CephError("radosgw-admin user rm", -errno.EEXIST, "could not remove user: unable to "
                                     "remove user, must specify purge data to remove user with buckets")
            del self.rgw_users[options["uid"]]
        return dict(user, user_id=options["uid"])

    def mgr_command(self, prefix, timeout=0, **args):
        self.commands.append((prefix, args))
        groups = self.filesystems[args["vol_name"]]["groups"]
        if prefix == "fs subvolumegroup create":
            groups.setdefault(args["group_name"], [])
        elif prefix == "fs subvolumegroup ls":
            return [{"name": g} for g in groups if g is not None]
        elif prefix == "fs subvolume ls":
            return [{"name": v} for v in groups.get(args.get("group_name"), [])]
        return {}

    def _filesystem_command(self, prefix, args):
        name = args.get("fs_name")
        if prefix == "fs ls":
            return [{"name": n, "metadata_pool": f["metadata"], "data_pools": list(f["data"])}
                    for n, f in self.filesystems.items()]
        if prefix == "fs new":
            self.filesystems[name] = {"metadata": args["metadata"], "data": [args["data"]], "settings": {},
                                      "groups": {None: []}, "failed": False}
        elif name is not None and name not in self.filesystems:
            raise ceph.CephError(prefix, -errno.ENOENT, "Filesystem not found: '%s'" % name)
        elif prefix == "fs add_data_pool" and args["pool"] not in self.filesystems[name]["data"]:
            self.filesystems[name]["data"].append(args["pool"])
        elif prefix == "fs set":
            self.filesystems[name]["settings"][args["var"]] = args["val"]
        elif prefix == "fs fail":
            self.filesystems[name]["failed"] = True
        elif prefix == "fs rm":
            del self.filesystems[name]
        return {}

    def command(self, prefix, **args):
        self.commands.append((prefix, args))
        if prefix.startswith("fs "):
            return self._filesystem_command(prefix, args)
        if prefix == "osd crush rule ls":
            return list(self.rules)
        if prefix == "osd crush rule dump":
            return [{"rule_id": i, "rule_name": r} for i, r in enumerate(self.rules)]
        if prefix == "osd crush rule create-replicated":
            self.rules.append(args["name"])
        elif prefix == "osd pool ls":
            return list(self.pools.values())
        elif prefix == "osd pool create":
            self.pools[args["pool"]] = {"pool_name": args["pool"], "pool_id": len(self.pools) + 2, "size": 3,
                                        "crush_rule": self.rules.index(args["rule"]), "quota_max_bytes": 0,
                                        "options": {}, "application_metadata": {}}
        elif prefix == "osd pool set":
            pool = self.pools[args["pool"]]
            if args["var"] == "crush_rule":
                pool["crush_rule"] = self.rules.index(args["val"])
            elif args["var"] == "size":
                pool["size"] = int(args["val"])
            else:
                pool["options"][args["var"]] = args["val"]
        elif prefix == "osd pool application enable":
            self.pools[args["pool"]]["application_metadata"][args["app"]] = {}
        elif prefix == "osd pool set-quota":
            self.pools[args["pool"]]["quota_max_bytes"] = int(args["val"])
        elif prefix == "osd pool rm":
            del self.pools[args["pool"]]
        elif prefix == "osd crush rule rm":
            self.rules.remove(args["name"])
        elif prefix == "auth get-or-create":
            key = self.users.setdefault(args["entity"], {"key": rook.cephx_key(), "caps": {}})
            if not key["caps"]:
                key["caps"] = dict(zip(args["caps"][::2], args["caps"][1::2]))
            return [{"entity": args["entity"], "key": key["key"], "caps": key["caps"]}]
        elif prefix == "auth caps":
            self.users[args["entity"]]["caps"] = dict(zip(args["caps"][::2], args["caps"][1::2]))
        elif prefix == "auth ls":
            return {"auth_dump": [{"entity": e} for e in sorted(self.users)]}
        elif prefix == "auth del":
            del self.users[args["entity"]]
        return {}


@pytest.fixture(autouse=True)
def gateways_answer(monkeypatch):
    """Whether the fake gateways answer on their ports (the lab's are real radosgw processes)."""
    answering = [True]
    monkeypatch.setattr(rook.processes, "port_open", lambda port, host="127.0.0.1": answering[0])
    return answering


class Running:
    """Every operator's Deployment is Available (deployments.Operators)."""

    @staticmethod
    def runs(operator):
        return True


def operator_for(ctl, kubes):
    """A Rook stand-in whose storage pools' Ceph is a FakeCeph each; Rook's Deployment is Available."""
    ctl.operators = {name: Running() for name in kubes}
    operator = rook.RookOperator(ctl, kubes)
    operator.cephs = {name: FakeCeph() for name in kubes}
    return operator


class Settings:
    def __init__(self, data):
        self.value = settings.StandinSettings(data)

    def get(self):
        return self.value


class Ctl:
    def __init__(self, data=None):
        self.settings = Settings(data or {})
        self.logs = []
        self.next_due = 10.0
        self.wake = threading.Event()

    def after(self, key, delay):
        return True

    def delay(self, name):
        return 0.0

    def log(self, message):
        self.logs.append(message)


NS = "rook-ceph"


def add(kube, kind, name, spec, namespace=NS):
    plural = rook.KINDS[kind][0] if kind in rook.KINDS else kind
    return kube.create(rook.url(kind, namespace) if kind in rook.KINDS else "/api/v1/%s" % plural,
                       {"apiVersion": rook.GV, "kind": kind, "metadata": {"name": name, "namespace": namespace},
                        "spec": spec})


def node(kube, name, address):
    kube.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                                  "status": {"addresses": [{"type": "InternalIP", "address": address}]}})


def obj(kube, kind, name, namespace=NS):
    return kube.objects[rook.url(kind, namespace, name)]


def passes(operator, count=8):
    for dummy in range(count):
        operator.reconcile()
        for running in list(operator.bootstraps.values()):  # the Ceph bootstraps run beside the passes
            running["thread"].join()


def secret_data(secret):
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def ready(o):
    return evaluate(o).ready


def test_cluster_goes_through_rooks_steps_to_ready_with_health_ok_and_its_outputs():
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    operator.reconcile()
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert (status["phase"], status["state"], status["message"]) == ("Progressing", "Creating", "Detecting Ceph version")
    assert "observedGeneration" not in status
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert (status["phase"], status["state"], status["message"]) == ("Ready", "Created", "Cluster created successfully")
    assert status["observedGeneration"] == 1
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [("Ready", "True", "ClusterCreated")]
    assert status["ceph"]["health"] == "HEALTH_OK"
    mon = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-mon"])
    assert set(mon) == {"fsid", "mon-secret", "ceph-username", "ceph-secret"}
    assert status["ceph"]["fsid"] == mon["fsid"] and str(uuid.UUID(mon["fsid"])) == mon["fsid"]
    endpoints = kube.objects["/api/v1/namespaces/rook-ceph/configmaps/rook-ceph-mon-endpoints"]["data"]
    assert endpoints["data"] == "a=%s:6789" % rook.mon_address("st-pool-a", NS, "a")
    assert endpoints["maxMonId"] == "0"
    mapping = {"node": {"a": {"Name": "st-1", "Hostname": "st-1", "Address": "10.250.5.10"}}}
    assert json.loads(endpoints["mapping"]) == mapping
    assert ready(obj(kube, "CephCluster", "rook-ceph"))
    # The collection's parsing reads the same monitors back.
    assert ceph_cluster.parse_mon_endpoints(endpoints["data"]) == [
        {"name": "a", "endpoint": "%s:6789" % rook.mon_address("st-pool-a", NS, "a")}]
    # Converged: no more writes, and nothing secret in the log.
    writes = kube.writes
    passes(operator)
    assert kube.writes == writes
    assert not any(mon["mon-secret"] in line or mon["ceph-secret"] in line or mon["fsid"] in line for line in ctl.logs)


def test_osds_follow_the_nodes_that_join_and_go_after_the_bootstrap():
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    passes(operator)
    pool_ceph = operator.cephs["st-pool-a"]

    def settle():
        for dummy in range(3):
            operator.reconcile()
            for thread in list(operator.preparing.values()):  # Rook's OSD prepare runs beside the passes
                thread.join()

    assert pool_ceph.hosts() == ["st-1"]
    # A cordoned Node gets none (k8sutil.ValidNode: "node is unschedulable"); once schedulable, its disks' OSDs.
    node(kube, "st-2", "10.250.5.11")
    kube.objects["/api/v1/nodes/st-2"]["spec"] = {"unschedulable": True}
    settle()
    assert pool_ceph.hosts() == ["st-1"]
    kube.objects["/api/v1/nodes/st-2"]["spec"] = {}
    settle()
    assert pool_ceph.hosts() == ["st-1", "st-2"]
    assert [o["id"] for o in pool_ceph.booted["osds"] if o["host"] == "st-2"] == [3, 4, 5]
    # A Node that is gone takes its OSD daemons with it.
    del kube.objects["/api/v1/nodes/st-2"]
    settle()
    assert pool_ceph.hosts() == ["st-1"]


def test_too_many_mons_for_the_nodes_is_refused_as_rook_does():
    kube = FakeKube()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(Ctl(), {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 3}})
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert (status["phase"], status["state"]) == ("Progressing", "Error")
    assert status["message"] == ("failed to perform validation before cluster creation: cannot start 3 mons on 1 node(s) "
                                 "when allowMultiplePerNode is false")
    verdict = evaluate(obj(kube, "CephCluster", "rook-ceph"))
    assert not verdict.ready and any("cannot start 3 mons" in m for m in verdict.missing)
    events = [o for k, o in kube.objects.items() if "/events/" in k]
    assert len(events) == 1 and events[0]["reason"] == "ReconcileFailed"
    # Allowed several per node: it comes up with three mons on the one Node.
    cluster = obj(kube, "CephCluster", "rook-ceph")
    cluster["spec"]["mon"]["allowMultiplePerNode"] = True
    cluster["metadata"]["generation"] = 2
    passes(operator)
    assert ready(obj(kube, "CephCluster", "rook-ceph"))
    endpoints = kube.objects["/api/v1/namespaces/rook-ceph/configmaps/rook-ceph-mon-endpoints"]["data"]
    assert [m["name"] for m in ceph_cluster.parse_mon_endpoints(endpoints["data"])] == ["a", "b", "c"]


def test_injected_cluster_failure_then_cephs_own_health():
    kube = FakeKube()
    node(kube, "st-1", "10.250.5.10")
    ctl = Ctl({"failures": {"CephCluster/rook-ceph": {"message": "failed to create cluster: boom"}}})
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert (status["phase"], status["state"], status["message"]) == ("Progressing", "Error", "failed to create cluster: boom")
    assert operator.cephs["st-pool-a"].state() is None  # no daemons for a failed orchestration
    ctl.settings = Settings({})
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert status["phase"] == "Ready" and status["ceph"]["health"] == "HEALTH_OK"
    booted = operator.cephs["st-pool-a"].state()
    assert booted["mons"] == [("a", "10.250.5.10")] and booted["hosts"] == [("st-1", "10.250.5.10")]
    assert len(booted["osds"]) == rook.LAB_DEVICES_PER_NODE and status["storage"]["osd"]["storeType"]["bluestore"] == 3
    assert status["ceph"]["capacity"]["bytesTotal"] == 3 << 30
    # Ceph reports a problem: the health checker writes its health and checks, then their clearing.
    report = operator.cephs["st-pool-a"].status()
    report["health"] = {"status": "HEALTH_WARN", "checks": {"OSD_DOWN": {
        "severity": "HEALTH_WARN", "summary": {"message": "1 osds down"}}}}
    operator.cephs["st-pool-a"].status = lambda: report
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert status["ceph"]["health"] == "HEALTH_WARN"
    assert status["ceph"]["details"] == {"OSD_DOWN": {"severity": "HEALTH_WARN", "message": "1 osds down"}}
    report["health"] = {"status": "HEALTH_OK", "checks": {}}
    passes(operator)
    status = obj(kube, "CephCluster", "rook-ceph")["status"]
    assert status["ceph"]["health"] == "HEALTH_OK" and "details" not in status["ceph"]
    assert status["ceph"]["previousHealth"] == "HEALTH_WARN"


def test_children_wait_for_their_cluster_then_become_ready_with_rooks_outputs():
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephBlockPool", "t-volumes", {"failureDomain": "host", "replicated": {"size": 3},
                                             "quotas": {"maxSize": "10Gi"}})
    add(kube, "CephClient", "openstack-t", {"caps": {"mon": "profile rbd"}})
    add(kube, "CephFilesystem", "t-cephfs", filesystem_spec())
    add(kube, "CephObjectStore", "t-rgw", {"gateway": {"port": 80, "instances": 2}})
    add(kube, "CephObjectStoreUser", "swift-t", {"store": "t-rgw"})
    passes(operator)
    # No CephCluster: Progressing (the user has no status yet), nothing Ready.
    assert obj(kube, "CephBlockPool", "t-volumes")["status"] == {"phase": "Progressing"}
    assert "status" not in obj(kube, "CephObjectStoreUser", "swift-t")
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    passes(operator, 12)
    pool = obj(kube, "CephBlockPool", "t-volumes")
    assert pool["status"]["phase"] == "Ready" and pool["status"]["observedGeneration"] == 1
    assert pool["status"]["info"] == {"type": "Replicated", "failureDomain": "host"}
    fake = operator.cephs["st-pool-a"]
    live = fake.pools["t-volumes"]
    assert pool["status"]["poolID"] == live["pool_id"]
    assert (live["size"], fake.rules[live["crush_rule"]], live["quota_max_bytes"]) == (3, "t-volumes_host", 10 << 30)
    assert "rbd" in live["application_metadata"]
    assert fake.users["client.openstack-t"]["caps"] == {"mon": "profile rbd"}
    client = obj(kube, "CephClient", "openstack-t")
    assert client["status"]["info"] == {"secretName": "rook-ceph-client-openstack-t"}
    secret = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-client-openstack-t"])
    assert set(secret) == {"openstack-t", "userID", "userKey", "adminID", "adminKey"}
    assert secret["userKey"] == fake.users["client.openstack-t"]["key"]
    assert secret["openstack-t"] == secret["userKey"] == secret["adminKey"] and secret["userID"] == "openstack-t"
    assert obj(kube, "CephFilesystem", "t-cephfs")["status"]["phase"] == "Ready"
    store = obj(kube, "CephObjectStore", "t-rgw")["status"]
    assert store["info"] == {"endpoint": "http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80"}
    assert store["endpoints"] == {"insecure": ["http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80"], "secure": []}
    user = obj(kube, "CephObjectStoreUser", "swift-t")["status"]
    assert user["phase"] == "Ready" and user["info"] == {"secretName": "rook-ceph-object-user-t-rgw-swift-t"}
    keys = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-object-user-t-rgw-swift-t"])
    assert set(keys) == {"AccessKey", "SecretKey", "Endpoint"}
    assert keys["Endpoint"] == "http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80"
    rgw_user = fake.rgw_users["swift-t"]
    assert (keys["AccessKey"], keys["SecretKey"]) == (rgw_user["keys"][0]["access_key"], rgw_user["keys"][0]["secret_key"])
    for kind, name in (("CephBlockPool", "t-volumes"), ("CephClient", "openstack-t"), ("CephFilesystem", "t-cephfs"),
                       ("CephObjectStore", "t-rgw"), ("CephObjectStoreUser", "swift-t")):
        assert ready(obj(kube, kind, name)), kind
    # Stable: no writes; the key does not change.
    writes = kube.writes
    passes(operator)
    assert kube.writes == writes
    assert not any(secret["userKey"] in line for line in ctl.logs)
    # Deleted and created again: a new Ceph user, a new key in the same Secret.
    kube.delete(rook.url("CephClient", NS, "openstack-t"))
    passes(operator, 1)
    add(kube, "CephClient", "openstack-t", {"caps": {"mon": "profile rbd"}})
    passes(operator)
    again = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-client-openstack-t"])
    assert again["userKey"] != secret["userKey"] and again["openstack-t"] == again["userKey"]
    # Deleted: Rook's finalizers delete the pool with its rule and the Ceph user, then let the CRs go.
    assert obj(kube, "CephBlockPool", "t-volumes")["metadata"]["finalizers"] == ["cephblockpool.ceph.rook.io"]
    kube.delete(rook.url("CephBlockPool", NS, "t-volumes"))
    kube.delete(rook.url("CephClient", NS, "openstack-t"))
    passes(operator, 1)
    assert "t-volumes" not in fake.pools and "t-volumes_host" not in fake.rules
    assert "client.openstack-t" not in fake.users
    assert rook.url("CephBlockPool", NS, "t-volumes") not in kube.objects
    assert rook.url("CephClient", NS, "openstack-t") not in kube.objects


def filesystem_spec(preserve=True, standby=True):
    """A CephFilesystem as the composition writes it (rook_manifests.filesystem), its pools over OSDs."""
    return {"metadataPool": {"failureDomain": "osd", "replicated": {"size": 3}},
            "dataPools": [{"name": "data0", "failureDomain": "osd", "replicated": {"size": 2}}],
            "metadataServer": {"activeCount": 1, "activeStandby": standby},
            "preserveFilesystemOnDelete": preserve, "preservePoolsOnDelete": preserve}


def ceph_lab(*children, **setup):
    """A Ready CephCluster on one Node with the children [(kind, name, spec)] reconciled: (kube, ctl, operator, its
    FakeCeph); setup secrets: [names] of Secrets in rook-ceph made first."""
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    for name in setup.get("secrets", ()):
        tls_secret(kube, name)
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    for kind, name, spec in children:
        add(kube, kind, name, spec)
    passes(operator, 12)
    return kube, ctl, operator, operator.cephs["st-pool-a"]


def filesystem_lab(spec):
    return ceph_lab(("CephFilesystem", "t-cephfs", spec))


def test_a_filesystem_is_made_in_ceph_as_rook_makes_it_and_follows_its_spec():
    kube, ctl, operator, fake = filesystem_lab(filesystem_spec())
    fs = obj(kube, "CephFilesystem", "t-cephfs")
    assert fs["metadata"]["finalizers"] == ["cephfilesystem.ceph.rook.io"]
    assert (fs["status"]["phase"], fs["status"]["observedGeneration"]) == ("Ready", 1) and ready(fs)
    # An active MDS and its standby on the pool's Node, joined to the filesystem.
    assert fake.mdss == {"t-cephfs-a": ("10.250.5.10", "t-cephfs"), "t-cephfs-b": ("10.250.5.10", "t-cephfs")}
    made = fake.filesystems["t-cephfs"]
    assert (made["metadata"], made["data"]) == ("t-cephfs-metadata", ["t-cephfs-data0"])
    for pool, size in (("t-cephfs-metadata", 3), ("t-cephfs-data0", 2)):
        live = fake.pools[pool]
        assert (live["size"], fake.rules[live["crush_rule"]]) == (size, pool + "_osd")
        assert list(live["application_metadata"]) == ["cephfs"]
    assert made["settings"] == {"allow_standby_replay": "true", "standby_count_wanted": "1"}
    assert made["groups"] == {None: [], "csi": []}
    writes = kube.writes
    passes(operator)
    assert kube.writes == writes
    # No standby any more: the second MDS goes, Ceph wants none.
    kube.patch(rook.url("CephFilesystem", NS, "t-cephfs"), fs,
               {"spec": {"metadataServer": {"activeCount": 1, "activeStandby": False}}})
    passes(operator)
    fs = obj(kube, "CephFilesystem", "t-cephfs")
    assert (fs["status"]["phase"], fs["status"]["observedGeneration"]) == ("Ready", 2)
    assert list(fake.mdss) == ["t-cephfs-a"]
    assert made["settings"] == {"allow_standby_replay": "false", "standby_count_wanted": "0", "max_mds": "1"}


def test_a_filesystem_without_data_pools_must_exist_in_ceph_already():
    kube, ctl, operator, fake = filesystem_lab({"metadataServer": {"activeCount": 1}})
    fs = obj(kube, "CephFilesystem", "t-cephfs")
    assert fs["status"]["phase"] == "Failure" and not fake.filesystems and not fake.pools
    assert any("failed to create filesystem \"t-cephfs\": Filesystem not found" in line for line in ctl.logs)


def test_a_filesystem_with_subvolumes_is_not_deleted_until_they_are_gone():
    kube, ctl, operator, fake = filesystem_lab(filesystem_spec(preserve=False))
    fake.filesystems["t-cephfs"]["groups"]["csi"].append("csi-vol-1")
    kube.delete(rook.url("CephFilesystem", NS, "t-cephfs"))
    passes(operator)
    fs = obj(kube, "CephFilesystem", "t-cephfs")
    blocked = dict((c["type"], c) for c in fs["status"]["conditions"])["DeletionIsBlocked"]
    assert (blocked["status"], blocked["reason"]) == ("True", "ObjectHasDependents")
    assert blocked["message"] == (
        'CephFilesystem "rook-ceph/t-cephfs" will not be deleted until all dependents are removed: filesystem '
        'subvolume groups that contain subvolumes (could be from CephFilesystem PVCs or CephNFS exports): [csi]')
    assert "t-cephfs" in fake.filesystems and len(fake.mdss) == 2
    # A CephFilesystemSubVolumeGroup of the filesystem holds it too; another filesystem's does not.
    fake.filesystems["t-cephfs"]["groups"]["csi"].clear()
    groups = rook.path(rook.GV, "cephfilesystemsubvolumegroups", NS)
    for name, filesystem in (("t-group", "t-cephfs"), ("other-group", "other-cephfs")):
        kube.create(groups, {"apiVersion": rook.GV, "kind": "CephFilesystemSubVolumeGroup",
                             "metadata": {"name": name, "namespace": NS}, "spec": {"filesystemName": filesystem}})
    passes(operator)
    blocked = dict((c["type"], c) for c in obj(kube, "CephFilesystem", "t-cephfs")["status"]["conditions"])[
        "DeletionIsBlocked"]
    assert blocked["message"].endswith("dependents are removed: CephFilesystemSubVolumeGroups: [t-group]")
    assert "t-cephfs" in fake.filesystems
    kube.objects.pop(groups + "/t-group")
    # The subvolume gone: the MDS daemons and their keys, the filesystem, its pools and rules, then the CR - in one
    # pass, the condition's write notwithstanding.
    fake.filesystems["t-cephfs"]["groups"]["csi"].clear()
    passes(operator, 1)
    assert not fake.filesystems and not fake.mdss and not fake.pools and not fake.rules
    assert rook.url("CephFilesystem", NS, "t-cephfs") not in kube.objects


def test_a_preserved_filesystem_keeps_its_data_when_its_cr_goes():
    kube, ctl, operator, fake = filesystem_lab(filesystem_spec())
    kube.delete(rook.url("CephFilesystem", NS, "t-cephfs"))
    passes(operator, 2)
    assert rook.url("CephFilesystem", NS, "t-cephfs") not in kube.objects
    assert not fake.mdss and fake.filesystems["t-cephfs"]["failed"]
    assert set(fake.pools) == {"t-cephfs-metadata", "t-cephfs-data0"}


def tls_secret(kube, name):
    kube.create("/api/v1/namespaces/%s/secrets" % NS, {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": {"name": name, "namespace": NS},
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}})


def object_store_lab(store_spec, name="t-rgw", **setup):
    return ceph_lab(("CephObjectStore", name, store_spec),
                    ("CephObjectStoreUser", "swift-t", {"store": name, "displayName": "OpenStack Swift User - t",
                                                        "capabilities": {"user": "*", "bucket": "*"}}), **setup)


# As the composition writes it (rook_manifests.object_store), its pools over OSDs.
STORE = {"metadataPool": {"failureDomain": "osd", "replicated": {"size": 3}},
         "dataPool": {"failureDomain": "osd", "replicated": {"size": 2}},
         "gateway": {"port": 80, "instances": 2}, "preservePoolsOnDelete": True}
SECURE = dict(STORE, gateway={"port": 80, "securePort": 443, "instances": 2})


def events_of(kube, name):
    """The messages of the object's events, oldest first."""
    found = [o for k, o in kube.objects.items() if "/events/" in k and o["involvedObject"]["name"] == name]
    return [o["message"] for o in sorted(found, key=lambda o: int(o["metadata"]["resourceVersion"]))]


def test_an_object_store_is_made_in_ceph_as_rook_makes_it_with_its_users_keys():
    kube, ctl, operator, fake = object_store_lab(STORE)
    store = obj(kube, "CephObjectStore", "t-rgw")
    assert store["metadata"]["finalizers"] == ["cephobjectstore.ceph.rook.io"] and ready(store)
    kinds = ("control", "meta", "log", "buckets.index", "buckets.non-ec", "otp", "buckets.data")
    pools = ["t-rgw.rgw.%s" % kind for kind in kinds] + [".rgw.root"]
    assert sorted(fake.pools) == sorted(pools)
    assert all(list(fake.pools[p]["application_metadata"]) == ["rgw"] for p in pools)
    assert fake.pools["t-rgw.rgw.buckets.data"]["size"] == 2 and fake.pools["t-rgw.rgw.meta"]["size"] == 3
    assert fake.rgw_config == {("realm", "t-rgw"), ("zonegroup", "t-rgw"), ("zone", "t-rgw")} and fake.periods == 1
    zonegroup = next(c for c in fake.commands if c[:3] == ("radosgw-admin", "zonegroup", "create"))
    assert "--endpoints=http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80" in zonegroup and "--master" in zonegroup
    assert fake.gateways == {"t.rgw.a": ("10.250.5.10", 7480), "t.rgw.b": ("10.250.5.10", 7481)}
    user = fake.rgw_users["swift-t"]
    assert (user["display_name"], user["max_buckets"]) == ("OpenStack Swift User - t", 1000)
    assert user["caps"] == [{"type": "buckets", "perm": "*"}, {"type": "users", "perm": "*"}]
    secret = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-object-user-t-rgw-swift-t"])
    assert secret["AccessKey"] == user["keys"][0]["access_key"]
    assert not any(secret["SecretKey"] in line for line in ctl.logs)
    writes, commands = kube.writes, len(fake.commands)
    passes(operator)
    assert (kube.writes, len(fake.commands)) == (writes, commands)
    # One instance fewer: its gateway goes.
    kube.patch(rook.url("CephObjectStore", NS, "t-rgw"), store, {"spec": {"gateway": {"instances": 1}}})
    passes(operator)
    assert list(fake.gateways) == ["t.rgw.a"] and obj(kube, "CephObjectStore", "t-rgw")["status"][
        "observedGeneration"] == 2


def test_a_users_capabilities_are_rgw_caps_under_either_of_rooks_names():
    assert rook.user_caps({"spec": {"capabilities": {"user": "*", "bucket": "read"}}}) == "buckets=read;users=*"
    assert rook.user_caps({"spec": {"capabilities": {"users": "read", "buckets": "*", "amz-cache": "*"}}}) == (
        "amz-cache=*;buckets=*;users=read")
    assert rook.user_caps({"spec": {}}) == ""


def test_with_a_certificate_the_store_advertises_https():
    spec = dict(SECURE, gateway=dict(SECURE["gateway"], sslCertificateRef="t-rgw-tls"))
    kube, ctl, operator, fake = object_store_lab(spec, secrets=["t-rgw-tls"])
    assert obj(kube, "CephObjectStore", "t-rgw")["status"]["info"] == {
        "secureEndpoint": "https://rook-ceph-rgw-t-rgw.rook-ceph.svc:443",
        "endpoint": "http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80"}
    secret = secret_data(kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-object-user-t-rgw-swift-t"])
    assert secret["Endpoint"] == "https://rook-ceph-rgw-t-rgw.rook-ceph.svc:443"
    # The service serving-cert annotation stands for a certificate too (OpenShift makes its Secret).
    annotated = dict(SECURE, gateway=dict(SECURE["gateway"], service={"annotations": {
        "service.beta.openshift.io/serving-cert-secret-name": "t-rgw-serving"}}))
    kube, ctl, operator, fake = object_store_lab(annotated)
    assert ready(obj(kube, "CephObjectStore", "t-rgw")) and fake.gateways


def test_a_secure_port_without_a_certificate_fails_as_rook_fails_it():
    kube, ctl, operator, fake = object_store_lab(SECURE)
    store = obj(kube, "CephObjectStore", "t-rgw")
    # setFailedStatus: Failure without observedGeneration (terminal for the waits), info emptied, the endpoints.
    assert store["status"]["phase"] == "Failure" and "observedGeneration" not in store["status"]
    assert "info" not in store["status"] and store["status"]["endpoints"] == {
        "insecure": ["http://rook-ceph-rgw-t-rgw.rook-ceph.svc:80"],
        "secure": ["https://rook-ceph-rgw-t-rgw.rook-ceph.svc:443"]}
    assert evaluate(store).terminal
    assert events_of(kube, "t-rgw") == [
        'failed to reconcile CephObjectStore "rook-ceph/t-rgw". failed to create object store deployments: failed to '
        'create object store "t-rgw": failed to start rgw pods: failed to create rgw deployment: no TLS certificates '
        'found']
    # Rook got as far as the pools and the realm; no gateway runs, so the user cannot be made.
    assert "t-rgw.rgw.meta" in fake.pools and ("realm", "t-rgw") in fake.rgw_config and not fake.gateways
    user = obj(kube, "CephObjectStoreUser", "swift-t")
    assert user["status"] == {"phase": "ReconcileFailed"} and not fake.rgw_users and not evaluate(user).ready
    assert events_of(kube, "swift-t") == [
        'failed to reconcile CephObjectStoreUser "rook-ceph/swift-t". failed to detect if object store "t-rgw" is '
        'initialized: no rgw pod found']
    # A certificate whose Secret is missing: refused too, until the Secret is there.
    store = obj(kube, "CephObjectStore", "t-rgw")
    kube.patch(rook.url("CephObjectStore", NS, "t-rgw"), store, {"spec": {"gateway": {"sslCertificateRef": "t-tls"}}})
    passes(operator)
    assert obj(kube, "CephObjectStore", "t-rgw")["status"]["phase"] == "Failure"
    assert events_of(kube, "t-rgw")[-1].endswith(
        'failed to create rgw deployment: failed to get Kubernetes secrets referring the TLS certificates: secrets '
        '"t-tls" not found')
    tls_secret(kube, "t-tls")
    passes(operator)
    assert ready(obj(kube, "CephObjectStore", "t-rgw")) and ready(obj(kube, "CephObjectStoreUser", "swift-t"))


def test_an_object_store_name_longer_than_38_characters_is_refused_as_rook_refuses_it():
    name = "t" * 35 + "-rgw"
    kube, ctl, operator, fake = object_store_lab(STORE, name=name)
    store = obj(kube, "CephObjectStore", name)
    # validateStore: before anything is made; the Progressing every reconcile begins with stays, so not terminal.
    assert store["status"]["phase"] == "Progressing" and not evaluate(store).terminal
    assert store["status"]["info"] == {"endpoint": "http://rook-ceph-rgw-%s.rook-ceph.svc:80" % name}
    assert events_of(kube, name) == [
        'failed to reconcile CephObjectStore "rook-ceph/%s". invalid object store "%s" arguments: object store name '
        'cannot be longer than 38 characters' % (name, name)]
    assert not fake.pools and not fake.rgw_config and not fake.gateways
    assert obj(kube, "CephObjectStoreUser", "swift-t")["status"] == {"phase": "ReconcileFailed"}
    # Its deletion is not refused: nothing to remove in Ceph, then the finalizer goes.
    kube.delete(rook.url("CephObjectStoreUser", NS, "swift-t"))
    kube.delete(rook.url("CephObjectStore", NS, name))
    passes(operator, 2)
    assert rook.url("CephObjectStore", NS, name) not in kube.objects
    kube, ctl, operator, fake = object_store_lab(STORE, name="t" * 34 + "-rgw")
    assert ready(obj(kube, "CephObjectStore", "t" * 34 + "-rgw"))
    assert rook.object_store_spec_error({"metadata": {"name": "t"}, "spec": {"gateway": {}}}) == (
        "invalid create: either of port or securePort fields should be not be zero")


def test_a_user_waits_for_a_gateway_that_answers(gateways_answer):
    gateways_answer[0] = False
    kube, ctl, operator, fake = object_store_lab(STORE)
    assert obj(kube, "CephObjectStore", "t-rgw")["status"]["phase"] == "Ready"
    assert obj(kube, "CephObjectStoreUser", "swift-t")["status"]["phase"] == "ReconcileFailed" and not fake.rgw_users
    gateways_answer[0] = True
    passes(operator)
    assert obj(kube, "CephObjectStoreUser", "swift-t")["status"]["phase"] == "Ready" and fake.rgw_users


def test_buckets_and_users_hold_an_object_store_and_a_users_buckets_hold_the_user():
    kube, ctl, operator, fake = object_store_lab(dict(STORE, preservePoolsOnDelete=False))
    fake.rgw_users["swift-t"]["buckets"].append("glance-images")
    kube.delete(rook.url("CephObjectStoreUser", NS, "swift-t"))
    kube.delete(rook.url("CephObjectStore", NS, "t-rgw"))
    passes(operator)
    # RGW refuses to remove a user who owns buckets: the user stays; the store waits for its dependents.
    assert rook.url("CephObjectStoreUser", NS, "swift-t") in kube.objects and "swift-t" in fake.rgw_users
    store = obj(kube, "CephObjectStore", "t-rgw")
    blocked = dict((c["type"], c) for c in store["status"]["conditions"])["DeletionIsBlocked"]
    assert blocked["message"] == (
        'CephObjectStore "rook-ceph/t-rgw" will not be deleted until all dependents are removed: CephObjectStoreUsers: '
        '[swift-t], buckets in the object store (could be from ObjectBucketClaims or COSI Buckets): [glance-images]')
    assert fake.gateways and fake.rgw_config
    # The bucket gone: the user goes, then (the next pass, in one) the store.
    fake.rgw_users["swift-t"]["buckets"].clear()
    passes(operator, 2)
    assert rook.url("CephObjectStoreUser", NS, "swift-t") not in kube.objects and not fake.rgw_users
    assert rook.url("CephObjectStore", NS, "t-rgw") not in kube.objects
    assert not fake.gateways and not fake.rgw_config and not fake.pools  # the last store: .rgw.root too


def test_injected_child_failures_and_refused_pools():
    kube = FakeKube()
    node(kube, "st-1", "10.250.5.10")
    ctl = Ctl({"failures": {"CephBlockPool/rook-ceph/t-images": {"message": rook.DEFAULT_ERRORS["CephBlockPool"] % {
        "name": "t-images"}}}})
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    add(kube, "CephBlockPool", "t-images", {"replicated": {"size": 3}})
    add(kube, "CephBlockPool", "t-unsafe", {"replicated": {"size": 1, "requireSafeReplicaSize": True}})
    add(kube, "CephBlockPool", "t-single", {"replicated": {"size": 1}})
    passes(operator, 12)
    failed = obj(kube, "CephBlockPool", "t-images")
    assert failed["status"]["phase"] == "Failure" and "observedGeneration" not in failed["status"]
    verdict = evaluate(failed)
    assert verdict.terminal
    events = {o["involvedObject"]["name"]: o["message"] for k, o in kube.objects.items() if "/events/" in k}
    assert events["t-images"].startswith('failed to reconcile CephBlockPool "rook-ceph/t-images". '
                                         'failed to create pool "t-images".')
    assert obj(kube, "CephBlockPool", "t-unsafe")["status"]["phase"] == "Progressing"
    assert "requireSafeReplicaSize is true" in events["t-unsafe"]
    assert obj(kube, "CephBlockPool", "t-single")["status"]["phase"] == "Ready"


def test_status_written_by_someone_else_is_left_alone():
    kube = FakeKube()
    operator = operator_for(Ctl(), {"st-pool-a": kube})
    cluster = add(kube, "CephCluster", "rook-ceph", {})
    cluster["metadata"]["managedFields"] = [{"manager": "a-test", "subresource": "status"}]
    kube.objects[rook.url("CephCluster", NS, "rook-ceph")] = cluster
    passes(operator)
    assert "status" not in obj(kube, "CephCluster", "rook-ceph")


class Initializing(FakeKube):
    def get(self, url):
        raise client.ApiError(429, {"message": "storage is (re)initializing"})

    def list(self, url):
        raise client.ApiError(429, {"message": "storage is (re)initializing"})


def test_a_cluster_whose_crds_are_still_initializing_does_not_stop_the_others():
    ready_kube, ctl = FakeKube(), Ctl()
    node(ready_kube, "st-1", "10.250.5.10")
    add(ready_kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    operator = operator_for(ctl, {"st-pool-a": Initializing(), "st-pool-b": ready_kube})
    operator.reconcile()
    assert obj(ready_kube, "CephCluster", "rook-ceph")["status"]["phase"] == "Progressing"
    assert ctl.next_due == 1.0 and any("storage is (re)initializing" in line for line in ctl.logs)


def test_a_deleted_cluster_releases_its_mon_secret_and_endpoints():
    kube = FakeKube()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(Ctl(), {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    passes(operator)
    secret = kube.objects["/api/v1/namespaces/rook-ceph/secrets/rook-ceph-mon"]
    assert secret["metadata"]["finalizers"] == [rook.DISASTER_FINALIZER]
    passes(operator)
    assert secret["metadata"]["finalizers"] == [rook.DISASTER_FINALIZER]  # kept while the cluster lives
    kube.delete(rook.url("CephCluster", NS, "rook-ceph"))
    operator.reconcile()
    for url in ("/api/v1/namespaces/rook-ceph/secrets/rook-ceph-mon",
                "/api/v1/namespaces/rook-ceph/configmaps/rook-ceph-mon-endpoints"):
        assert "finalizers" not in kube.objects[url]["metadata"], url


def test_host_networking_puts_each_mon_on_its_nodes_address():
    def node(name, internal, annotated=None):
        meta = {"name": name}
        if annotated:
            meta["annotations"] = {rook.MON_IP_ANNOTATION: annotated}
        return {"metadata": meta, "status": {"addresses": [{"type": "Hostname", "address": name},
                                                           {"type": "InternalIP", "address": internal}]}}
    cluster = {"metadata": {"namespace": NS, "name": "rook-ceph"},
               "spec": {"mon": {"count": 3}, "network": {"provider": "host", "addressRanges": {"public": ["10.30.1.0/24"]}}}}
    nodes = [node("n2", "10.30.1.11"), node("n1", "10.30.1.10"), node("n3", "10.30.1.12", annotated="10.30.1.99")]
    assert rook.mon_endpoints("st-pool-a", cluster, nodes) == [
        ("a", "10.30.1.10:6789"), ("b", "10.30.1.11:6789"), ("c", "10.30.1.99:6789")]
    cluster["spec"]["network"]["connections"] = {"requireMsgr2": True}
    assert rook.mon_endpoints("st-pool-a", cluster, nodes)[0] == ("a", "10.30.1.10:3300")
    # The default pod network: a Service's cluster-internal address, whatever the Nodes are.
    del cluster["spec"]["network"]
    assert rook.mon_endpoints("st-pool-a", cluster, nodes)[0] == ("a", "%s:6789" % rook.mon_address("st-pool-a", NS, "a"))


def test_a_pool_with_images_is_not_deleted_until_force_deletion_is_asked_for():
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(ctl, {"st-pool-a": kube})
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    add(kube, "CephBlockPool", "t-volumes", {"failureDomain": "osd", "replicated": {"size": 3}})
    passes(operator, 12)
    fake = operator.cephs["st-pool-a"]
    fake.images["t-volumes"] = ["volume-1", "volume-2"]
    kube.delete(rook.url("CephBlockPool", NS, "t-volumes"))
    passes(operator)
    pool = obj(kube, "CephBlockPool", "t-volumes")
    blocked = dict((c["type"], c) for c in pool["status"]["conditions"])
    assert (blocked["PoolDeletionIsBlocked"]["status"], blocked["PoolDeletionIsBlocked"]["reason"]) == (
        "True", "PoolNotEmpty")
    assert blocked["PoolDeletionIsBlocked"]["message"] == 'pool "t-volumes" contains images or snapshots and cannot be deleted'
    assert (blocked["DeletionIsBlocked"]["status"], blocked["DeletionIsBlocked"]["reason"]) == (
        "False", "ObjectHasNoDependents")
    assert "t-volumes" in fake.pools and fake.images["t-volumes"]
    # rook.io/force-deletion: Rook's clean-up removes the images, then the pool and the CR go.
    kube.patch(rook.url("CephBlockPool", NS, "t-volumes"), pool,
               {"metadata": {"annotations": {"rook.io/force-deletion": "true"}}})
    passes(operator, 3)
    assert "t-volumes" not in fake.pools and "t-volumes" not in fake.images
    assert rook.url("CephBlockPool", NS, "t-volumes") not in kube.objects


def test_a_rados_namespace_that_names_a_pool_holds_its_deletion_force_or_not():
    kube, ctl, operator, fake = ceph_lab(("CephBlockPool", "t-volumes", {"failureDomain": "osd", "replicated": {"size": 3}}))
    namespaces = rook.path(rook.GV, "cephblockpoolradosnamespaces", NS)
    for name, spec in (("t-ns", {"blockPoolName": "t-volumes"}), ("t-named", {"blockPoolName": "t-volumes", "name": "n"}),
                       ("other-ns", {"blockPoolName": "other-volumes"})):
        kube.create(namespaces, {"apiVersion": rook.GV, "kind": "CephBlockPoolRadosNamespace",
                                 "metadata": {"name": name, "namespace": NS}, "spec": spec})
    fake.images["t-volumes"] = ["volume-1"]
    pool = obj(kube, "CephBlockPool", "t-volumes")
    kube.patch(rook.url("CephBlockPool", NS, "t-volumes"), pool,
               {"metadata": {"annotations": {"rook.io/force-deletion": "True"}}})  # Rook compares without case
    kube.delete(rook.url("CephBlockPool", NS, "t-volumes"))
    passes(operator, 3)
    # The clean-up removed the images; the namespaces still hold the pool (no force for them).
    pool = obj(kube, "CephBlockPool", "t-volumes")
    blocked = dict((c["type"], c) for c in pool["status"]["conditions"])
    assert (blocked["DeletionIsBlocked"]["status"], blocked["DeletionIsBlocked"]["reason"]) == ("True", "ObjectHasDependents")
    assert blocked["DeletionIsBlocked"]["message"] == (
        'CephBlockPool "rook-ceph/t-volumes" will not be deleted until all dependents are removed: '
        'CephBlockPoolRadosNamespaces: [n t-ns]')
    assert (blocked["PoolDeletionIsBlocked"]["status"], blocked["PoolDeletionIsBlocked"]["reason"]) == ("False", "PoolEmpty")
    assert "t-volumes" in fake.pools and not fake.images.get("t-volumes")
    # What a wait until the pool is gone reports of it.
    assert "blocked: CephBlockPool" in reported_while_deleted(pool) and "[n t-ns]" in reported_while_deleted(pool)
    for name in ("t-ns", "t-named"):
        kube.objects.pop(namespaces + "/" + name)
    passes(operator, 1)
    assert "t-volumes" not in fake.pools and rook.url("CephBlockPool", NS, "t-volumes") not in kube.objects


def test_a_bootstrap_that_breaks_fails_the_orchestration_and_is_made_again():
    kube, ctl = FakeKube(), Ctl()
    node(kube, "st-1", "10.250.5.10")
    operator = operator_for(ctl, {"st-pool-a": kube})
    fake = operator.cephs["st-pool-a"]
    real_bootstrap, calls = fake.bootstrap, []

    def breaking(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise NameError("name 'cstr' is not defined")  # whatever breaks: not a Ready cluster
        return real_bootstrap(*args, **kwargs)

    fake.bootstrap = breaking
    add(kube, "CephCluster", "rook-ceph", {"mon": {"count": 1}})
    seen = []
    for dummy in range(12):
        passes(operator, 1)
        status = obj(kube, "CephCluster", "rook-ceph")["status"]
        seen.append((status["phase"], status["state"], status["message"]))
    # Reported as Rook reports a failed orchestration, then orchestrated again from the start, and Ready.
    error = "failed to create cluster: failed to start ceph daemons: name 'cstr' is not defined"
    assert ("Progressing", "Error", error) in seen
    assert seen[-1] == ("Ready", "Created", "Cluster created successfully") and len(calls) == 2
