# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""region/control_plane_health: a ControlPlane's health by dependency phase, with the engine's real verdicts."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import region_control_plane
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.dependency_graph import PHASES

NS = "openstack"
KORC = "openstack.k-orc.cloud/v1alpha1"


def control_plane(services=("keystone", "glance", "placement", "nova", "neutron", "cinder"), **spec):
    cp = region_control_plane({"name": "lab"}, list(services))
    cp["metadata"]["uid"] = "uid-lab"
    cp["spec"].update(spec)
    return cp


def cond(ctype, status="True", reason=None, message=None, generation=None):
    found = {"type": ctype, "status": status}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    if generation is not None:
        found["observedGeneration"] = generation
    return found


def ready_status(kind):
    if kind == "RabbitmqCluster":
        return {"observedGeneration": 1, "conditions": [cond("AllReplicasReady"), cond("ClusterAvailable")]}
    if kind == "Valkey":
        return {"observedGeneration": 1, "state": "Ready"}
    if kind == "Memcached":
        return {"observedGeneration": 1, "conditions": [
            cond("Available"), cond("Progressing", "False"), cond("Degraded", "False")]}
    return {"observedGeneration": 1, "conditions": [cond("Ready")]}


def owned(api_version, kind, name, status=None, owner="uid-lab", namespace=NS):
    meta = {"name": name, "namespace": namespace, "generation": 1}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane", "name": "lab",
                                    "uid": owner, "controller": True}]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta,
            "status": ready_status(kind) if status is None else status}


def korc(kind, name, status=None):
    obj = owned(KORC, kind, name, owner=None)
    obj["status"] = status if status is not None else {"conditions": [
        cond("Available", generation=1), cond("Progressing", "False", generation=1)]}
    return obj


def live(*objs, **served):
    """{(apiVersion, kind): [objects]} with every kind served (an empty list) unless served says False."""
    objects = dict((pair, []) for pair in health.kinds_for())
    for obj in objs:
        objects[(obj["apiVersion"], obj["kind"])].append(obj)
    for kind, on in served.items():
        for pair in list(objects):
            if pair[1] == kind and not on:
                objects[pair] = None
    return objects


def all_ready(components=("mariadb", "rabbitmq", "valkey", "memcached", "keystone", "glance", "placement",
                          "nova", "neutron", "cinder")):
    objs = []
    for name in components:
        for api_version, kind in health.COMPONENT_KINDS[name]:
            objs.append(owned(api_version, kind, name))
    objs.append(korc("Domain", "default"))
    objs.append(korc("Service", "nova"))
    return objs


def by_name(report):
    return dict((p["name"], p) for p in report["phases"])


def test_every_component_of_the_graph_has_kinds():
    assert sorted(health.COMPONENT_KINDS) == sorted(c for p in PHASES for c in p["components"])
    assert health.PHASE_NAMES == ("infrastructure", "identity", "service-catalog", "core", "compute",
                                  "scheduler", "testing")


def test_enabled_components_of_the_region_control_plane():
    enabled = health.enabled_components(control_plane())
    assert [c for c, on in enabled.items() if on] == [
        "mariadb", "rabbitmq", "valkey", "memcached", "keystone", "k-orc", "glance", "placement",
        "nova", "neutron", "cinder"]
    assert not enabled["cortex"] and not enabled["tempest"]


def test_enabled_components_follow_the_switches():
    cp = control_plane(services=("keystone", "nova"), cortex={"enabled": True}, tempest={"enabled": True},
                       korc={"enabled": False})
    cp["spec"]["infrastructure"]["valkey"]["enabled"] = False
    enabled = health.enabled_components(cp)
    assert enabled["nova"] and not enabled["glance"] and not enabled["valkey"] and not enabled["k-orc"]
    assert enabled["cortex"] and enabled["tempest"]


def test_a_tenant_section_without_enabled_and_a_missing_one_use_the_seeds_defaults():
    cp = {"metadata": {"name": "t", "namespace": "openstack-t"},
          "spec": {"openstack": {"keystone": {"replicas": 3}, "nova": {"enabled": False}}}}
    enabled = health.enabled_components(cp)
    assert enabled["keystone"] and not enabled["nova"]
    assert enabled["placement"] and enabled["glance"] and not enabled["cortex"]


def test_everything_ready():
    report = health.build_report(control_plane(), live(*all_ready()), evaluate)
    assert report["ready"] and not report["failed"]
    assert report["first_not_ready"] is None and report["blocking"] is None and report["waiting"] == []
    states = dict((p["name"], p["state"]) for p in report["phases"])
    assert states == {"infrastructure": "ready", "identity": "ready", "service-catalog": "ready", "core": "ready",
                      "compute": "ready", "scheduler": "not-enabled", "testing": "not-enabled"}
    lines = health.table(report)
    assert lines[0] == "ControlPlane openstack/lab: ready"
    assert len(lines) == 1 + len(PHASES)
    assert lines[1].split()[:3] == ["1", "infrastructure", "ready"]
    assert "off: cortex" in lines[6]
    assert health.summary(report) == "ControlPlane openstack/lab: every enabled phase is ready"


def test_the_first_phase_not_ready_its_blocking_cr_and_the_phases_behind_it():
    objs = [o for o in all_ready() if o["kind"] not in ("Glance", "Placement", "Nova", "Neutron", "Cinder")]
    keystone = next(o for o in objs if o["kind"] == "Keystone")
    keystone["status"] = {"conditions": [cond("Ready", "False", "DatabaseNotReady", "waiting for MariaDB grant")]}
    report = health.build_report(control_plane(), live(*objs), evaluate)
    assert not report["ready"] and not report["failed"]
    assert report["first_not_ready"] == "identity"
    blocking = report["blocking"]
    assert (blocking["kind"], blocking["name"], blocking["component"], blocking["phase"]) == (
        "Keystone", "keystone", "keystone", "identity")
    assert blocking["condition"] == {"type": "Ready", "status": "False", "reason": "DatabaseNotReady",
                                     "message": "waiting for MariaDB grant"}
    assert "reason DatabaseNotReady: waiting for MariaDB grant" in blocking["text"]
    assert report["waiting"] == ["core", "compute"]
    phases = by_name(report)
    assert phases["infrastructure"]["state"] == "ready" and phases["identity"]["state"] == "blocked"
    assert phases["service-catalog"]["state"] == "ready"
    glance = phases["core"]["components"][0]
    assert glance["state"] == "blocked" and not glance["objects"][0]["found"]
    assert glance["objects"][0]["missing"] == ["no Glance owned by the ControlPlane yet"]
    text = health.summary(report)
    assert text == ("phase 2 identity is not ready: Keystone openstack/keystone (keystone): condition Ready is False "
                    "(reason DatabaseNotReady: waiting for MariaDB grant); waiting behind it: core, compute")
    lines = health.table(report)
    assert lines[0] == "ControlPlane openstack/lab: not ready"
    assert lines[-1] == text
    assert "keystone: Keystone keystone: condition Ready is False" in lines[2]
    message = health.failure_message([report], timeout=30)
    assert message == "ControlPlane openstack/lab, after 30s: " + text
    assert health.failure_message([report]) == ""  # not failed: no terminal message


def test_the_progress_line_counts_ready_control_planes_and_names_the_one_furthest_behind():
    objs = [o for o in all_ready() if o["kind"] not in ("Glance", "Placement", "Nova", "Neutron", "Cinder")]
    keystone = next(o for o in objs if o["kind"] == "Keystone")
    keystone["status"] = {"conditions": [cond("Ready", "False", "DatabaseNotReady", "waiting for MariaDB grant")]}
    identity = health.build_report(control_plane(), live(*objs), evaluate, through="identity")
    nothing = dict(health.build_report(control_plane(), live(), evaluate, through="identity"), name="empty")
    ready = dict(health.build_report(control_plane(), live(*all_ready()), evaluate, through="identity"), name="done")
    assert health.progress_line([ready, identity, nothing]) == (
        "1/3 ControlPlane(s) ready through identity, slowest ControlPlane openstack/empty: " + health.summary(nothing))
    assert health.summary(nothing).startswith("phase 1 infrastructure is not ready: MariaDB")
    assert health.progress_line([ready, identity]).startswith(
        "1/2 ControlPlane(s) ready through identity, slowest ControlPlane openstack/lab: phase 2 identity is not ready")
    assert health.progress_line([ready]) is None
    assert health.progress_line([]) == "no ControlPlane exists yet"
    assert health.progress_line([health.missing_report(NS, "x")]) == (
        "0/1 ControlPlane(s) ready, slowest ControlPlane openstack/x does not exist")


def test_missing_infrastructure_blocks_phase_one():
    report = health.build_report(control_plane(), live(), evaluate)
    assert report["first_not_ready"] == "infrastructure"
    assert report["blocking"]["kind"] == "MariaDB" and not report["blocking"]["found"]
    assert report["waiting"] == ["identity", "service-catalog", "core", "compute"]
    korc_phase = by_name(report)["service-catalog"]
    assert korc_phase["components"][0]["objects"][0]["missing"] == [
        "no K-ORC objects in namespace openstack yet (phase 5, the keystone_bootstrap role, creates the service "
        "catalog)"]


def test_kinds_not_served_and_objects_not_owned():
    other = owned("k8s.mariadb.com/v1alpha1", "MariaDB", "mariadb", owner="someone-else")
    report = health.build_report(control_plane(), live(other, RabbitmqCluster=False, Domain=False, Project=False,
                                                       Role=False, Service=False, Endpoint=False, User=False,
                                                       ApplicationCredential=False), evaluate)
    infra = by_name(report)["infrastructure"]["components"]
    assert infra[0]["objects"][0]["missing"] == [
        "no MariaDB owned by the ControlPlane yet (not owned by it: mariadb)"]
    assert infra[1]["objects"][0]["missing"] == ["rabbitmq.com/v1beta1 RabbitmqCluster is not served (its CRD is "
                                                 "not installed)"]
    assert by_name(report)["service-catalog"]["components"][0]["objects"][0]["missing"] == [
        "K-ORC is not installed (openstack.k-orc.cloud/v1alpha1 is not served)"]


def test_a_terminal_verdict_fails_the_phase():
    objs = all_ready()
    bad = next(o for o in objs if o["kind"] == "Service")
    bad["status"] = {"conditions": [
        cond("Available", "False", "InvalidConfiguration", "spec.resource.type is invalid", 1),
        cond("Progressing", "False", "InvalidConfiguration", "spec.resource.type is invalid", 1)]}
    report = health.build_report(control_plane(), live(*objs), evaluate)
    assert report["failed"] and report["first_not_ready"] == "service-catalog"
    assert by_name(report)["service-catalog"]["state"] == "failed"
    assert report["blocking"]["terminal"] and report["blocking"]["name"] == "nova"
    assert report["waiting"] == []
    message = health.failure_message([report])
    assert message.startswith("ControlPlane openstack/lab: phase 3 service-catalog failed: Service openstack/nova "
                              "(k-orc): ")
    assert "InvalidConfiguration" in message


def test_an_object_being_deleted_is_terminal():
    objs = all_ready()
    mariadb = objs[0]
    mariadb["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    report = health.build_report(control_plane(), live(*objs), evaluate)
    assert report["failed"] and report["blocking"]["kind"] == "MariaDB"
    assert "being deleted" in report["blocking"]["text"]


def test_through_limits_what_counts():
    objs = [o for o in all_ready() if o["metadata"]["name"] in ("mariadb", "rabbitmq", "valkey", "memcached")]
    report = health.build_report(control_plane(), live(*objs), evaluate, through="infrastructure")
    assert report["ready"] and report["first_not_ready"] is None
    assert [p["counted"] for p in report["phases"]] == [True] + [False] * 6
    assert "(not waited for)" in health.table(report)[2]
    assert health.table(report)[0] == "ControlPlane openstack/lab: ready through infrastructure"
    report = health.build_report(control_plane(), live(*objs), evaluate, through="identity")
    assert not report["ready"] and report["first_not_ready"] == "identity"
    with pytest.raises(InputError, match="unknown phase 'nope'"):
        health.build_report(control_plane(), live(), evaluate, through="nope")


def test_optional_phases_count_when_enabled():
    objs = all_ready()
    report = health.build_report(control_plane(cortex={"enabled": True}), live(*objs), evaluate)
    assert by_name(report)["scheduler"]["state"] == "blocked" and report["first_not_ready"] == "scheduler"
    objs.append(owned("cortex.c5c3.io/v1alpha1", "Cortex", "cortex"))
    report = health.build_report(control_plane(cortex={"enabled": True}), live(*objs), evaluate)
    assert report["ready"] and by_name(report)["scheduler"]["state"] == "ready"


def test_a_stale_ready_is_not_ready_and_the_why_condition():
    objs = all_ready()
    keystone = next(o for o in objs if o["kind"] == "Keystone")
    keystone["metadata"]["generation"] = 2
    report = health.build_report(control_plane(), live(*objs), evaluate)
    assert report["first_not_ready"] == "identity"
    assert "status.observedGeneration 1 < metadata.generation 2" in report["blocking"]["text"]
    memcached = {"status": {"conditions": [cond("Available"), cond("Progressing", "True", "Rolling"),
                                           cond("Degraded", "True", "PodsCrashing", "2 pods crash")]}}
    assert health.why_condition(memcached) == {"type": "Degraded", "status": "True", "reason": "PodsCrashing",
                                               "message": "2 pods crash"}
    assert health.why_condition({"status": {}}) is None


def test_objects_of_other_namespaces_do_not_count():
    objs = all_ready()
    objs.append(owned("glance.openstack.c5c3.io/v1alpha1", "Glance", "other", namespace="openstack-x",
                      status={"conditions": [cond("Ready", "False")]}))
    report = health.build_report(control_plane(), live(*objs), evaluate)
    assert report["ready"]
    assert [o["name"] for o in by_name(report)["core"]["components"][0]["objects"]] == ["glance"]


def test_the_control_plane_status_in_the_header_and_a_missing_control_plane():
    cp = control_plane()
    cp["status"] = {"phase": "Provisioning", "conditions": [cond("Ready", "False", "NotAllReady", "...")]}
    report = health.build_report(cp, live(), evaluate)
    assert health.table(report)[0] == ("ControlPlane openstack/lab: not ready [status.phase Provisioning, "
                                       "Ready=False (NotAllReady)]")
    missing = health.missing_report(NS, "lab")
    assert health.table(missing) == ["ControlPlane openstack/lab: does not exist"]
    assert health.failure_message([missing], 5) == "ControlPlane openstack/lab does not exist after 5s"
    assert health.summary(missing) == "ControlPlane openstack/lab does not exist"


def test_kinds_for():
    assert health.kinds_for(["keystone", "mariadb"]) == [
        ("k8s.mariadb.com/v1alpha1", "MariaDB"), ("keystone.openstack.c5c3.io/v1alpha1", "Keystone")]
    assert len(health.kinds_for()) == 12 + 7
