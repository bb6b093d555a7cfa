# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage maintenance's Job script against a fake `ceph` (Ceph's JSON as the commands print it), and the
Node and Job records."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import storage_maintenance as maintenance


@pytest.fixture
def script():
    """SCRIPT's functions, its clock at 0 and its sleeps instant (a deadline of 0 or more is never reached)."""
    names = {"__name__": "storage_maintenance_script"}
    exec(compile(maintenance.SCRIPT, "SCRIPT", "exec"), names)  # pylint: disable=exec-used
    names["time"] = type("Clock", (), {"time": staticmethod(lambda: 0), "sleep": staticmethod(lambda s: None)})
    return names


def tree(hosts, out=(), down=(), cls="hdd"):
    """`ceph osd tree` of root default with hosts {name: [osd ids]}."""
    nodes = [{"id": -1, "name": "default", "type": "root", "children": [-2 - i for i in range(len(hosts))]}]
    for index, (host, osds) in enumerate(sorted(hosts.items())):
        nodes.append({"id": -2 - index, "name": host, "type": "host", "children": list(osds)})
        nodes += [{"id": o, "name": "osd.%d" % o, "type": "osd", "device_class": cls,
                   "status": "down" if o in down else "up", "reweight": 0 if o in out else 1} for o in osds]
    return {"nodes": nodes, "stray": []}


RULES = [{"rule_id": 0, "rule_name": "replicated_rule",
          "steps": [{"op": "take", "item": -1, "item_name": "default"},
                    {"op": "chooseleaf_firstn", "num": 0, "type": "host"}, {"op": "emit"}]},
         {"rule_id": 1, "rule_name": "tenant_osd",
          "steps": [{"op": "take", "item": -5, "item_name": "default~hdd"},
                    {"op": "choose_firstn", "num": 0, "type": "osd"}, {"op": "emit"}]}]


class FakeCeph(object):
    """`ceph <args>` answered from the state: the tree, the pools, the rules; PGs clean once `clean_after` polls."""

    def __init__(self, osd_tree, pools, clean_after=0):
        self.tree, self.pools, self.clean_after = osd_tree, pools, clean_after
        self.calls = []
        self.out = set(n["id"] for n in osd_tree["nodes"] if n["type"] == "osd" and n["reweight"] == 0)

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        if args == ("osd", "tree"):
            return self.tree
        if args == ("osd", "pool", "ls", "detail"):
            return self.pools
        if args == ("osd", "crush", "rule", "dump"):
            return RULES
        if args[:2] == ("osd", "safe-to-destroy"):  # JSON: exit 0 whatever the verdict
            ids = [int(a.split(".")[1]) for a in args[2:]]
            return {"safe_to_destroy": ids if self.clean_after < 0 else [], "active": [] if self.clean_after < 0
                    else ids}
        if args == ("osd", "df"):
            osd_nodes = [n for n in self.tree["nodes"] if n["type"] == "osd"]
            return {"nodes": [{"id": n["id"], "name": n["name"], "reweight": 0 if n["id"] in self.out else 1,
                               "pgs": 0 if self.clean_after < 0 or n["id"] not in self.out else 1}
                              for n in osd_nodes]}
        if args[:2] in (("osd", "out"), ("osd", "in")):
            ids = set(int(a.split(".")[1]) for a in args[2:])
            self.out = self.out | ids if args[1] == "out" else self.out - ids
        if args == ("pg", "stat"):
            self.clean_after -= 1
            states = [{"name": "active+clean", "num": 3}]
            if self.clean_after >= 0:
                states.append({"name": "active+remapped+backfilling", "num": 1})
            return {"pg_summary": {"num_pg_by_state": states, "num_pgs": 4}}
        return None


def pool(name, size, rule):
    return {"pool_name": name, "size": size, "crush_rule": rule}


def test_out_is_refused_when_a_pool_would_lose_a_failure_domain_it_needs(script):
    pools = [pool(".mgr", 1, 0), pool("volumes", 2, 0), pool("images", 3, 1)]
    ceph = FakeCeph(tree({"node-a": [0, 1], "node-b": [2, 3]}), pools)
    with pytest.raises(script["Stop"]) as stop:
        script["main"](ceph, "out", "node-a", 0)
    assert stop.value.code == maintenance.REFUSED
    assert str(stop.value) == (
        "refused to take the OSDs of node-a out (osd.0 osd.1) - pool volumes (size 2) would have 1 host buckets with "
        "OSDs in - pool images (size 3) would have 2 osd buckets with OSDs in")
    assert not [c for c in ceph.calls if c[:2] == ("osd", "out")]


def test_out_marks_the_osds_out_and_waits_until_their_data_moved(script):
    ceph = FakeCeph(tree({"node-a": [0, 1, 2], "node-b": [3, 4, 5]}), [pool("images", 3, 1)], clean_after=2)
    assert script["main"](ceph, "out", "node-b", 10) == 0
    assert ("osd", "out", "osd.3", "osd.4", "osd.5") in ceph.calls
    # The PGs leave the OSDs over three polls; the fourth finds them gone and every PG clean.
    assert ceph.calls.count(("pg", "stat")) == 4
    # Never done: the deadline ends it, naming what is left.
    ceph = FakeCeph(tree({"node-a": [0, 1, 2], "node-b": [3, 4, 5]}), [pool("images", 3, 1)], clean_after=99)
    with pytest.raises(script["Stop"]) as stop:
        script["main"](ceph, "out", "node-b", -1)
    assert stop.value.code == maintenance.NOT_DONE and str(stop.value) == (
        "not drained in time (PGs still on osd.3 osd.4 osd.5 - 1 active+remapped+backfilling)")


def test_out_counts_only_osds_up_and_in_of_the_rules_device_class(script):
    # node-c's OSDs are ssd, node-b's down: for the hdd rule over OSDs only node-a's two are left, fewer than 3.
    osd_tree = tree({"node-a": [0, 1], "node-b": [2, 3]}, down=(2, 3))
    osd_tree["nodes"][0]["children"].append(-9)
    osd_tree["nodes"] += [{"id": -9, "name": "node-c", "type": "host", "children": [7, 8]}] + [
        {"id": o, "name": "osd.%d" % o, "type": "osd", "device_class": "ssd", "status": "up", "reweight": 1}
        for o in (7, 8)]
    assert script["short_pools"](osd_tree, [pool("images", 3, 1)], RULES, [4]) == [
        "pool images (size 3) would have 2 osd buckets with OSDs in"]
    # The class-less rule over hosts counts node-c's ssd OSDs: node-a and node-c are left, node-b's are down.
    assert script["short_pools"](osd_tree, [pool("volumes", 2, 0)], RULES, []) == []
    assert script["short_pools"](osd_tree, [pool("volumes", 2, 0)], RULES, [0, 1]) == [
        "pool volumes (size 2) would have 1 host buckets with OSDs in"]


def test_a_host_without_osds_is_done_at_once(script):
    ceph = FakeCeph(tree({"node-a": [0]}), [])
    assert script["main"](ceph, "out", "node-z", 0) == 0
    assert ceph.calls == [("osd", "tree")]


def test_in_marks_them_in_and_waits_for_clean_pgs(script):
    ceph = FakeCeph(tree({"node-a": [0], "node-b": [1]}, out=(1,)), [])
    assert script["main"](ceph, "in", "node-b", 10) == 0
    assert ("osd", "in", "osd.1") in ceph.calls


def test_purge_refuses_osds_still_in_and_purges_the_down_ones_with_their_bucket(script):
    ceph = FakeCeph(tree({"node-a": [0], "node-b": [1, 2]}, out=(1,), down=(1, 2)), [])
    with pytest.raises(script["Stop"]) as stop:
        script["main"](ceph, "purge", "node-b", 10)
    assert stop.value.code == maintenance.REFUSED and str(stop.value) == "refused to purge osd.2 - still in"
    ceph = FakeCeph(tree({"node-a": [0], "node-b": [1, 2]}, out=(1, 2), down=(1, 2)), [])
    assert script["main"](ceph, "purge", "node-b", 10) == 0
    assert [c for c in ceph.calls if c[:2] in (("osd", "purge"), ("osd", "crush"))] == [
        ("osd", "purge", "osd.1", "--yes-i-really-mean-it"), ("osd", "purge", "osd.2", "--yes-i-really-mean-it"),
        ("osd", "crush", "rm", "node-b")]
    # Then until every PG is whole again, on three polls (their weight gone, CRUSH may place PGs anew).
    assert ceph.calls[-3:] == [("pg", "stat")] * 3


def test_the_node_records_and_the_job():
    node = {"metadata": {"name": "st.pool-1", "labels": {"kubernetes.io/hostname": "st.pool-1.lab"}}}
    assert maintenance.crush_host(node) == "st-pool-1-lab"
    assert maintenance.owner(node) is None and not maintenance.is_done(node)
    on = maintenance.node_manifest("st.pool-1", True)
    assert on["spec"] == {"unschedulable": True}
    node.update(on)
    assert maintenance.owner(node) == "ours" and maintenance.is_done(node)
    assert maintenance.owner(node, "cobaltcore - scale-in") == "cobaltcore - maintenance"
    assert maintenance.node_manifest("st.pool-1", False) == {"apiVersion": "v1", "kind": "Node",
                                                             "metadata": {"name": "st.pool-1"}}
    job = maintenance.job_manifest("out", "st-pool-1-lab", "quay.io/ceph/ceph:v19.2.3", 600)
    assert job["metadata"]["name"] == maintenance.job_name("out", "st-pool-1-lab")
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = dict((e["name"], e.get("value", e.get("valueFrom"))) for e in container["env"])
    # The admin key comes from Rook's Secret at the pod's start: never in the Job.
    assert env["ROOK_CEPH_SECRET"] == {"secretKeyRef": {"name": "rook-ceph-mon", "key": "ceph-secret"}}
    assert env["ROOK_MON_ENDPOINTS"] == {"configMapKeyRef": {"name": "rook-ceph-mon-endpoints", "key": "data"}}
    assert (env["ACTION"], env["CRUSH_HOST"], env["DEADLINE_SECONDS"]) == ("out", "st-pool-1-lab", "600")
    assert maintenance.pod_message([{"status": {"containerStatuses": [{"state": {"terminated": {
        "message": "refused\n"}}}]}}]) == "refused"
