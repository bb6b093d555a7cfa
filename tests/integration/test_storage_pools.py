# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage pools (phase 6): a Ready CephCluster with HEALTH_OK per pool, its fsid and monitors as the
fact cobaltcore_ceph, equal to what Rook wrote and to the real Ceph behind the pool.

Rook is the gardenlet stand-in's Rook stand-in (lab/regionlab/standins/rook.py) driving a real Ceph per pool
(lab/regionlab/ceph.py); the CRDs come from the real rook-ceph chart, installed in phase 3.
"""

import base64
import json
import time

from conftest import (REPO, failures, finish_verbose, lab_kubectl, objects, run_playbook, standins_restored, start_verbose,
                      task_results, update_standins, wait_truthy)
from regionlab import ceph, processes

STORAGE = REPO / "playbooks" / "storage.yml"
POOLS = ("st-pool-a", "st-pool-b")
NAMESPACE = "rook-ceph"
APPLY = "Apply the pool's CephCluster and wait until Rook reports it Ready"
INFO = "Read the fsid and monitors Rook wrote"
FACT = "The pool's Ceph for the tenants' phase (hostvars[<pool>].cobaltcore_ceph)"
ERROR = "failed to create cluster: failed to start ceph monitors: failed to assign pods to mons: lab failure"


def rook_outputs(pool):
    cluster = objects(pool, "cephclusters.ceph.rook.io", NAMESPACE)[0]
    config_map = json.loads(lab_kubectl(pool, "get", "configmap", "rook-ceph-mon-endpoints", "-n", NAMESPACE,
                                        "-o", "json").stdout)
    secret = json.loads(lab_kubectl(pool, "get", "secret", "rook-ceph-mon", "-n", NAMESPACE, "-o", "json").stdout)
    return cluster, config_map, {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def test_every_storage_pool_has_a_ready_ceph_cluster_and_its_fact(region):
    facts = task_results(region.first.out, FACT)
    assert sorted(facts) == sorted(POOLS)
    fsids = set()
    for pool in POOLS:
        cluster, config_map, secret = rook_outputs(pool)
        status = cluster["status"]
        assert (status["phase"], status["state"], status["message"]) == ("Ready", "Created",
                                                                         "Cluster created successfully")
        assert status["observedGeneration"] == cluster["metadata"]["generation"]
        assert status["ceph"]["health"] == "HEALTH_OK"
        assert cluster["spec"]["mon"]["count"] == 1 and cluster["metadata"]["labels"]["c5c3.io/storage-pool"] == pool
        fact = facts[pool]["ansible_facts"]["cobaltcore_ceph"]
        assert fact["fsid"] == secret["fsid"] == status["ceph"]["fsid"]
        monitors = [entry.split("=", 1)[1] for entry in config_map["data"]["data"].split(",")]
        assert fact["monitors"] == monitors and len(monitors) == 1
        assert fact["health"] == "HEALTH_OK"
        fsids.add(fact["fsid"])
        # The real Ceph behind the pool: its fsid, its mon on the pool's Node address, its OSDs up.
        report = ceph.Cluster(pool).status()
        assert report["fsid"] == fact["fsid"] and report["osdmap"]["num_up_osds"] == report["osdmap"]["num_osds"] == 3
        assert [m["public_addr"].split("/")[0] for m in ceph.Cluster(pool).command("mon dump")["mons"]] == monitors
        # The mon and admin keys are in no output of the -vvv build.
        for key in ("mon-secret", "ceph-secret"):
            assert secret[key] not in region.first.text, (pool, key)
    assert len(fsids) == len(POOLS)  # one Ceph cluster per pool


def test_the_rerun_changes_nothing(region):
    for pool, result in task_results(region.second.out, APPLY).items():
        assert not result["changed"] and result["results"][0]["result"] == "unchanged", pool
    first, second = task_results(region.first.out, FACT), task_results(region.second.out, FACT)
    assert all(first[p]["ansible_facts"] == second[p]["ansible_facts"] for p in POOLS)
    assert all(not r["changed"] for r in task_results(region.second.out, INFO).values())


def test_a_failing_ceph_cluster_fails_the_play_naming_pool_and_rooks_message(region):
    with standins_restored():
        update_standins(lambda d: d.setdefault("failures", {}).update({"CephCluster/%s/rook-ceph" % NAMESPACE: {
            "message": ERROR}}))
        # Rook reports the failed orchestration on the CephCluster (both pools share the namespace name).
        wait_truthy(lambda: rook_outputs("st-pool-b")[0]["status"].get("message") == ERROR, "Rook reports the failure")
        started = time.monotonic()
        rc, out = run_playbook(STORAGE, "--limit", "st-pool-b", "-e", json.dumps({"ceph_cluster_wait_timeout": 4}))
        print("\nfailing CephCluster reported after %.1fs" % (time.monotonic() - started))
        assert rc != 0
        failed = failures(out)
        assert [(task.split(" : ", 1)[-1], host) for task, host, dummy in failed] == [(APPLY, "st-pool-b")]
        assert ERROR in failed[0][2] and "rook-ceph" in failed[0][2], failed[0][2]
        status = rook_outputs("st-pool-b")[0]["status"]
        assert (status["phase"], status["state"]) == ("Progressing", "Error")
    # Taken out again: Rook orchestrates once more and the phase converges, with the same fsid.
    fsid = rook_outputs("st-pool-b")[2]["fsid"]
    rc, out = run_playbook(STORAGE)
    assert rc == 0, failures(out)
    assert task_results(out, FACT)["st-pool-b"]["ansible_facts"]["cobaltcore_ceph"]["fsid"] == fsid


def test_phase6_waits_for_health_ok_and_names_cephs_checks_while_an_osd_is_down(region):
    """An OSD of st-pool-b's real Ceph stopped (a failed disk): Ceph reports HEALTH_WARN with its own checks, Rook's
    health checker writes them, and phase 6 reads again until HEALTH_OK; one that stays HEALTH_WARN fails at
    ceph_cluster_health_wait_timeout naming the health and each of Ceph's checks. The OSD back: the run converges."""
    pool_ceph = ceph.Cluster("st-pool-b")
    osd = pool_ceph.process("osd", "1")
    try:
        processes.stop(osd)
        wait_truthy(lambda: rook_outputs("st-pool-b")[0]["status"]["ceph"]["health"] == "HEALTH_WARN", "HEALTH_WARN",
                    timeout=60)
        details = rook_outputs("st-pool-b")[0]["status"]["ceph"]["details"]
        assert "OSD_DOWN" in details and details["OSD_DOWN"]["severity"] == "HEALTH_WARN", details
        started = time.monotonic()
        rc, out = run_playbook(STORAGE, "--limit", "st-pool-b", "-e", json.dumps({"ceph_cluster_health_wait_timeout": 2}))
        assert rc != 0 and time.monotonic() - started >= 2
        failed = failures(out)
        assert [(task.split(" : ", 1)[-1], host) for task, host, dummy in failed] == [(INFO, "st-pool-b")], failed
        assert failed[0][2].startswith("storage pool st-pool-b: Ceph health is HEALTH_WARN, want HEALTH_OK ("), failed
        for check, detail in details.items():
            assert "%s: %s" % (check, detail["message"]) in failed[0][2], (check, failed[0][2])
        print("\n" + failed[0][2])
        # The OSD comes back while a run reads: that run goes on and converges.
        run = start_verbose(STORAGE, "--limit", "st-pool-b")
        time.sleep(4)
        assert run.poll() is None, "phase 6 did not wait for HEALTH_OK"
    finally:
        pool_ceph.start(only=osd)
    rc, out, dummy = finish_verbose(run)
    assert rc == 0, failures(out)
    read = task_results(out, INFO)["st-pool-b"]
    assert read["health"] == "HEALTH_OK" and read["attempts"] > 1, read
    assert all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
