# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of long waits: what a not-ready object reports, the wait's one line, and its throttle."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import progress as common
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import progress
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import Readiness, evaluate

GARDENER = "core.gardener.cloud/v1beta1"
ROOK = "ceph.rook.io/v1"
HELM = "helm.toolkit.fluxcd.io/v2"


def obj(api_version, kind, name, status=None, namespace="ns", **meta):
    found = {"apiVersion": api_version, "kind": kind,
             "metadata": dict({"name": name, "namespace": namespace, "generation": 1}, **meta)}
    if status is not None:
        found["status"] = status
    return found


def ref(found):
    return {"apiVersion": found["apiVersion"], "kind": found["kind"], "name": found["metadata"]["name"],
            "namespace": found["metadata"].get("namespace")}


def shoot(name, percent, state="Processing", description="Waiting until the kube-apiserver is ready"):
    return obj(GARDENER, "Shoot", name, {"observedGeneration": 1, "lastOperation": {
        "type": "Create", "state": state, "progress": percent, "description": description}},
        spec={"seedName": "seed"})


def cond(ctype, status, reason=None, message=None):
    found = {"type": ctype, "status": status}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    return found


def states_of(*objects):
    return [(ref(o), evaluate(o), o) for o in objects]


# -- what one object reports ---------------------------------------------------------------------

def test_a_shoot_reports_its_last_operation_with_progress_and_description():
    assert progress.reported(shoot("a", 40)) == (
        "lastOperation Create Processing 40%: Waiting until the kube-apiserver is ready")


def test_a_shoot_without_last_operation_reports_what_readiness_misses():
    unscheduled = obj(GARDENER, "Shoot", "a")
    text = progress.reported(unscheduled, evaluate(unscheduled))
    assert text.startswith("the Shoot has no seed (spec.seedName is empty")


def test_a_shoot_whose_operation_succeeded_reports_the_condition_that_is_not_true():
    healthy_op = shoot("a", 100, state="Succeeded", description="Shoot cluster has been successfully reconciled.")
    healthy_op["status"]["conditions"] = [cond("EveryNodeReady", "False", "NodesUnhealthy", "node x is not ready")]
    assert progress.reported(healthy_op, evaluate(healthy_op)) == (
        "condition EveryNodeReady is False (reason NodesUnhealthy: node x is not ready)")


def test_rook_reports_phase_message_and_ceph_health():
    cluster = obj(ROOK, "CephCluster", "ceph", {"phase": "Progressing", "message": "Configuring Ceph Mons",
                                                "ceph": {"health": "HEALTH_WARN"}})
    assert progress.reported(cluster) == "phase Progressing: Configuring Ceph Mons; HEALTH_WARN"
    pool = obj(ROOK, "CephBlockPool", "volumes", {"phase": "Failure"})
    assert progress.reported(pool) == "phase Failure"
    created = obj(ROOK, "CephCluster", "ceph", {"state": "Creating"})
    assert progress.reported(created) == "state Creating"


def test_a_helm_release_reports_its_ready_condition_then_reconciling():
    failing = obj(HELM, "HelmRelease", "rook", {"conditions": [
        cond("Ready", "False", "InstallFailed", "Helm install failed:\n  timed out")]})
    assert progress.reported(failing) == "Ready=False InstallFailed: Helm install failed: timed out"
    reconciling = obj(HELM, "HelmRelease", "rook", {"observedGeneration": 1, "conditions": [
        cond("Ready", "True", "InstallSucceeded"), cond("Reconciling", "True", "Progressing", "upgrading")]})
    assert progress.reported(reconciling) == "Reconciling=True Progressing: upgrading"


def test_other_kinds_report_the_ready_reason_a_phase_or_the_first_thing_missing():
    widget = obj("test.example.com/v1", "Widget", "w", {"conditions": [cond("Ready", "False", "Provisioning")]})
    assert progress.reported(widget) == "Ready=False Provisioning"
    pvc = obj("v1", "PersistentVolumeClaim", "data", {"phase": "Pending"})
    assert progress.reported(pvc) == "phase Pending"
    stale_status = {"observedGeneration": 1, "conditions": [cond("Ready", "True", "Done")]}
    stale = obj("test.example.com/v1", "Widget", "w", stale_status, generation=2)
    # Ready=True of an older generation: readiness's own words, not the stale condition.
    assert progress.reported(stale, evaluate(stale)) == "status.observedGeneration 1 < metadata.generation 2"
    assert progress.reported(obj("v1", "Pod", "p")) == "status is not reported yet"
    assert progress.reported(None) == "not found"


def test_a_report_is_one_short_line():
    long = obj("test.example.com/v1", "Widget", "w", {"conditions": [cond("Ready", "False", "X", "word\n" * 200)]})
    text = progress.reported(long)
    assert "\n" not in text and len(text) == progress.REPORT_LIMIT and text.endswith("...")


# -- the wait's line -----------------------------------------------------------------------------

def test_the_line_counts_ready_objects_and_names_the_shoot_furthest_behind():
    succeeded = {"observedGeneration": 1, "conditions": [],
                 "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100}}
    done = obj(GARDENER, "Shoot", "done", succeeded, spec={"seedName": "seed"})
    states = states_of(shoot("a", 70), done, shoot("b", 40), shoot("c", 90))
    assert states[1][1].ready
    assert progress.waiting_line(states) == (
        "1/4 ready, slowest Shoot ns/b: lastOperation Create Processing 40%: Waiting until the kube-apiserver is ready")


def test_an_object_not_found_is_furthest_behind_and_the_first_of_equals_is_named():
    widget = obj("test.example.com/v1", "Widget", "w", {"conditions": [cond("Ready", "False", "Provisioning")]})
    other = obj("test.example.com/v1", "Widget", "v", {"conditions": [cond("Ready", "False", "Queued")]})
    missing = {"apiVersion": "test.example.com/v1", "kind": "Widget", "name": "gone", "namespace": "ns"}
    assert progress.waiting_line(states_of(widget, other)) == "0/2 ready, slowest Widget ns/w: Ready=False Provisioning"
    assert progress.waiting_line(states_of(widget) + [(missing, None, None)]) == (
        "0/2 ready, slowest Widget ns/gone: not found")


def test_nothing_left_to_wait_for_is_no_line():
    ready = obj("v1", "ConfigMap", "c")
    assert progress.waiting_line(states_of(ready)) is None
    assert progress.waiting_line([(ref(ready), None, None)], absent=True) is None


def test_an_absent_wait_counts_what_is_gone_and_reports_deletion_and_finalizers():
    deleting = obj("v1", "Namespace", "t", {"phase": "Terminating"}, namespace=None,
                   deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["kubernetes"])
    gone = {"apiVersion": "v1", "kind": "Namespace", "name": "old"}
    line = progress.waiting_line([(gone, None, None), (ref(deleting), evaluate(deleting), deleting)], absent=True)
    assert line == "1/2 gone, slowest Namespace t: being deleted, finalizers kubernetes"
    deleted = shoot("a", 30, description="Deleting the infrastructure")
    deleted["status"]["lastOperation"]["type"] = "Delete"
    assert progress.waiting_line([(ref(deleted), True, deleted)], absent=True) == (
        "0/1 gone, slowest Shoot ns/a: lastOperation Delete Processing 30%: Deleting the infrastructure")


def test_an_absent_wait_says_what_rook_holds_a_deleted_object_for():
    message = ('CephFilesystem "rook-ceph/t-cephfs" will not be deleted until all dependents are removed: filesystem '
               'subvolume groups that contain subvolumes (could be from CephFilesystem PVCs or CephNFS exports): [csi]')
    held = obj("ceph.rook.io/v1", "CephFilesystem", "t-cephfs",
               {"phase": "Ready", "conditions": [cond("DeletionIsBlocked", "True", "ObjectHasDependents", message)]},
               namespace="rook-ceph", deletionTimestamp="2026-01-01T00:00:00Z",
               finalizers=["cephfilesystem.ceph.rook.io"])
    line = progress.waiting_line([(ref(held), evaluate(held), held)], absent=True)
    assert line.startswith("0/1 gone, slowest CephFilesystem rook-ceph/t-cephfs: being deleted, finalizers "
                           "cephfilesystem.ceph.rook.io; blocked: CephFilesystem \"rook-ceph/t-cephfs\" will not")
    # A condition that does not block (False), or another vendor's condition of that name, is not reported.
    held["status"]["conditions"][0]["status"] = "False"
    assert progress.waiting_line([(ref(held), evaluate(held), held)], absent=True).endswith(
        "finalizers cephfilesystem.ceph.rook.io")
    other = obj("test.example.com/v1", "Widget", "w",
                {"conditions": [cond("DeletionIsBlocked", "True", "Dependents", "held")]},
                deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["x"])
    assert "blocked" not in progress.waiting_line([(ref(other), evaluate(other), other)], absent=True)


def test_problems_line():
    assert progress.problems_line("server discovery", []) is None
    assert progress.problems_line("server discovery", ["BMC a: no Server yet"]) == (
        "server discovery not yet: BMC a: no Server yet")
    assert progress.problems_line("pool", ["a", "b", "c"]) == "pool not yet: a (and 2 more)"


# -- the throttle --------------------------------------------------------------------------------

class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_reporter_sends_at_most_one_line_per_interval_and_none_before_the_first_interval():
    clock, lines, made = Clock(), [], []

    def make():
        made.append(clock.now)
        return "0/1 ready"

    reporter = common.Reporter(lines.append, interval=10, clock=clock)
    for step in range(31):
        reporter(make)
        clock.now += 1
    # Rounds every second for 30 s: lines at 10, 20 and 30 s, and nothing composed in between.
    assert lines == ["10s: 0/1 ready", "20s: 0/1 ready", "30s: 0/1 ready"]
    assert made == [110.0, 120.0, 130.0]


def test_a_round_with_nothing_to_report_does_not_use_up_the_interval():
    clock, lines = Clock(), []
    reporter = common.Reporter(lines.append, interval=5, clock=clock)
    clock.now += 5
    assert reporter(lambda: None) is False
    clock.now += 1
    assert reporter(lambda: "x\ny") is True
    assert lines == ["6s: x y"]


def test_offer_without_a_reporter_does_nothing():
    common.offer(None, lambda: 1 / 0)


def test_the_file_writer_appends_masked_lines_and_never_fails(tmp_path):
    path = tmp_path / "progress"
    write = common.file_writer(str(path), mask=lambda line: line.replace("s3cret", "********"))
    write("Ready=False: password s3cret refused")
    write("second")
    assert path.read_text() == "Ready=False: password ******** refused\nsecond\n"
    common.file_writer(str(tmp_path / "missing" / "dir"))("lost, quietly")


def test_the_reporter_comes_from_the_environment_only_when_the_action_plugin_asks(tmp_path):
    assert common.reporter_from_env({}) is None
    path = str(tmp_path / "p")
    clock = Clock()
    reporter = common.reporter_from_env({common.PROGRESS_FILE_ENV: path, common.PROGRESS_INTERVAL_ENV: "3"},
                                        clock=clock)
    assert reporter.interval == 3
    clock.now += 3
    reporter(lambda: "1/2 ready")
    assert open(path).read() == "3s: 1/2 ready\n"
    fallback = common.reporter_from_env({common.PROGRESS_FILE_ENV: path, common.PROGRESS_INTERVAL_ENV: "x"})
    assert fallback.interval == common.DEFAULT_INTERVAL


# -- the waiter offers its line each round -------------------------------------------------------

class FakeClient(object):
    """Three rounds: the widget turns ready in the third."""

    def __init__(self):
        self.rounds = 0

    def resource(self, api_version, kind):
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import ResourceType
        return ResourceType(api_version, kind, kind.lower() + "s", True)

    def get(self, rtype, name, namespace):
        self.rounds += 1
        status = "True" if self.rounds >= 3 else "False"
        return obj("test.example.com/v1", "Widget", name, {"conditions": [cond("Ready", status, "Provisioning")]})


def test_the_waiter_offers_its_line_while_objects_are_pending(monkeypatch):
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import poll as poll_module
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter
    monkeypatch.setattr(poll_module.time, "sleep", lambda seconds: None)
    offered = []
    waiter = Waiter(FakeClient(), progress=lambda make: offered.append(make()))
    results = waiter.wait([{"apiVersion": "test.example.com/v1", "kind": "Widget", "name": "w", "namespace": "ns"}], 60)
    assert results[0]["ready"]
    assert offered == ["0/1 ready, slowest Widget ns/w: Ready=False Provisioning"] * 2
    # Without a reporter the same wait gives the same verdict.
    assert Waiter(FakeClient()).wait([dict(results[0], apiVersion="test.example.com/v1")], 60)[0]["ready"]


def test_readiness_fallback_is_used_only_without_kind_words():
    assert progress.reported(obj("v1", "Secret", "s", {}), Readiness(False, missing=["first", "second"])) == "first"
