# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""storage_maintenance against a fake storage pool cluster whose Jobs another test thread ends."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import threading
import time

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import storage_maintenance as maintenance
from ansible_collections.c5c3.cobaltcore.plugins.modules import storage_maintenance

from module_harness import kube, kubeconfig, run_module  # noqa: F401  # pylint: disable=unused-import

ROOK = "ceph.rook.io/v1"
IMAGE = "quay.io/ceph/ceph:v19.2.3"


@pytest.fixture
def pool(kube):
    kube.kinds.update({("v1", "Node"): ("nodes", False), ("batch/v1", "Job"): ("jobs", True),
                       ("v1", "Pod"): ("pods", True), (ROOK, "CephCluster"): ("cephclusters", True)})
    kube.add({"apiVersion": ROOK, "kind": "CephCluster", "metadata": {"name": "rook-ceph", "namespace": "rook-ceph"},
              "spec": {"cephVersion": {"image": IMAGE}}, "status": {"ceph": {"health": "HEALTH_OK"}}})
    return kube


def node(kube, name="st-1", reason=None, cordoned=False):
    meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
    if reason:
        meta["annotations"] = {maintenance.ANNOTATION: reason}
    kube.add({"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": {"unschedulable": cordoned}})


def run(check_mode=False, **args):
    return run_module(storage_maintenance.main, dict(dict(node="st-1", wait_timeout=5, wait_sleep=1), **args,
                                                     kubeconfig=kubeconfig()), check_mode=check_mode)


def end_jobs(kube, outcome, message=None):
    """The Job controller and kubelet: the next Job the module makes ends with the outcome (its pod's last words)."""
    seen = []

    def play():
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not seen:
            for key, job in list(kube.objects.items()):
                if key[1] == "Job" and not job.get("status"):
                    seen.append(job)
                    name = job["metadata"]["name"]
                    kube.add({"apiVersion": "v1", "kind": "Pod", "metadata": {
                        "name": name + "-x", "namespace": "rook-ceph", "labels": {kube_names.JOB_NAME_LABEL: name}},
                        "status": {"containerStatuses": [{"state": {"terminated": {"message": message or ""}}}]}})
                    kube.add(dict(job, status={"conditions": [{"type": outcome, "status": "True"}]}))
            time.sleep(0.05)

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    return seen


def live_node(kube, name="st-1"):
    return kube.find("v1", "Node", name)


def jobs(kube):
    return [k for k in kube.objects if k[1] == "Job"]


def test_on_runs_the_out_job_then_cordons_and_annotates_the_node(pool):
    node(pool)
    seen = end_jobs(pool, "Complete")
    result, unused = run(state="on")
    assert result["changed"] and not result.get("failed") and result["crush_host"] == "st-1", result
    (job,) = seen
    env = dict((e["name"], e.get("value")) for e in job["spec"]["template"]["spec"]["containers"][0]["env"])
    assert (env["ACTION"], env["CRUSH_HOST"]) == ("out", "st-1")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    assert maintenance.is_done(live_node(pool)) and not jobs(pool)
    # Done: no Job, no change.
    result, unused = run(state="on")
    assert not result["changed"] and result["maintenance"] == "ours" and "job" not in result


def test_a_refused_job_fails_naming_its_reason_and_leaves_the_node(pool):
    node(pool)
    said = "refused to take the OSDs of st-1 out (osd.0) - pool images (size 3) needs 3 host buckets"
    end_jobs(pool, "Failed", said)
    result, unused = run(state="on")
    assert result["failed"] and result["msg"].endswith("(OSDs out) failed: %s" % said), result["msg"]
    assert maintenance.owner(live_node(pool)) is None and not live_node(pool)["spec"]["unschedulable"]
    assert not jobs(pool)


def test_check_mode_plans_the_job_and_writes_nothing(pool):
    node(pool)
    result, unused = run(check_mode=True, state="on")
    assert result["changed"] and result["job"]["action"] == "out"
    assert not jobs(pool) and maintenance.owner(live_node(pool)) is None
    assert [c for c in pool.calls if c[0] != "GET" and not c[4]] == []


def test_off_lifts_only_its_own_maintenance(pool):
    node(pool, reason="cobaltcore - scale-in", cordoned=True)
    result, unused = run(state="off")
    assert result["failed"] and "for another reason (cobaltcore - scale-in)" in result["msg"] and not jobs(pool)
    node(pool, name="st-2")
    result, unused = run(state="off", node="st-2")
    assert not result["changed"] and result["found"]
    node(pool, reason=maintenance.REASON, cordoned=True)
    seen = end_jobs(pool, "Complete")
    result, unused = run(state="off")
    assert result["changed"] and [j["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"]
                                  for j in seen] == ["in"]


def test_a_cluster_without_the_node_or_rook_changes_nothing(kube, pool):
    result, unused = run(state="on", node="elsewhere")
    assert not result["changed"] and not result["found"]
    del kube.kinds[(ROOK, "CephCluster")]
    node(kube)
    result, unused = run(state="on")
    assert not result["changed"] and not result["found"]


def test_purged_only_once_the_node_is_gone(pool):
    node(pool)
    result, unused = run(state="purged")
    assert result["failed"] and "Node st-1 still exists" in result["msg"] and not jobs(pool)
    result, unused = run(check_mode=True, state="purged")
    assert result["changed"] and result["job"]["action"] == "purge"
    seen = end_jobs(pool, "Complete")
    result, unused = run(state="purged", node="st-9.lab")
    assert result["changed"] and not result.get("failed")
    env = seen[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["value"] for e in env[:2]] == ["purge", "st-9-lab"] and result["crush_host"] == "st-9-lab"
    # The bucket the drain returned (the gone Node's hostname label) over the Node's name.
    seen = end_jobs(pool, "Complete")
    result, unused = run(state="purged", node="st-9.lab", crush_host="st-9")
    env = seen[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["value"] for e in env[:2]] == ["purge", "st-9"] and result["crush_host"] == "st-9"
