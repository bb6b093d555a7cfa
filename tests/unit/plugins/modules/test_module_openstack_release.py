# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""openstack_release: the plan in check mode, the refusals before any write, the steps in order, the stop."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases
from ansible_collections.c5c3.cobaltcore.plugins.modules import openstack_release

from module_harness import run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import
from test_module_control_plane_health import CP_API, INFRA, add_control_plane, add_owned
from test_module_control_plane_health import cluster  # noqa: F401  # pylint: disable=unused-import

OLD = releases.TAGS["2025.2"]
NEW = releases.TAGS["2026.1"]
ARGS = {"control_planes": [{"namespace": "openstack", "name": "lab"}], "release": "2026.1", "wait_timeout": 5,
        "wait_sleep": 1}


def service_status(tag, generation=1, **extra):
    status = {"observedGeneration": generation, "installedRelease": tag, "upgradePhase": "",
              "conditions": [{"type": "Ready", "status": "True", "reason": "AllReady"}]}
    status.update(extra)
    return status


def add_cluster(kube, name="lab", namespace="openstack"):  # noqa: F811
    add_control_plane(kube, name=name, namespace=namespace, uid="uid-" + name)
    for component in INFRA:
        add_owned(kube, component, namespace=namespace, uid="uid-" + name, cp=name)
    for service, tag in OLD.items():
        obj = add_owned(kube, service, service_status(tag), namespace=namespace, uid="uid-" + name, cp=name)
        obj["spec"] = {"image": {"repository": "ghcr.io/c5c3/%s" % service, "tag": tag}}
        kube.objects[(obj["apiVersion"], obj["kind"], namespace, service)] = obj


@pytest.fixture
def region(cluster, monkeypatch):  # noqa: F811
    add_cluster(cluster)
    cluster.order = []
    cluster.fail = {}
    # The operators: a service CR takes the ControlPlane's tag and, on the next look, runs it.
    real = c5c3_api.release_services

    def operators(client, control_plane, services=None):
        meta = control_plane["metadata"]
        cp = cluster.find(CP_API, "ControlPlane", meta["name"], meta["namespace"])
        written = releases.written_tags(cp)
        for service, obj in real(client, cp).items():
            stored = cluster.find(obj["apiVersion"], obj["kind"], service, meta["namespace"])
            tag = written.get(service)
            if tag and stored["spec"]["image"]["tag"] != tag:
                stored["spec"]["image"]["tag"] = tag
                cluster.order.append(service if meta["name"] == "lab" else "%s/%s" % (meta["name"], service))
            elif tag and stored["status"]["installedRelease"] != tag:
                stored["status"] = service_status(tag) if service not in cluster.fail else service_status(
                    stored["status"]["installedRelease"], upgradePhase="Migrating", conditions=[
                        {"type": "DatabaseReady", "status": "False", "reason": cluster.fail[service],
                         "message": "db sync failed"}])
        return real(client, cp, services)
    monkeypatch.setattr(c5c3_api, "release_services", operators)
    return cluster


def writes(kube):  # noqa: F811
    return [c for c in kube.calls if c[0] == "PATCH"]


def test_check_mode_returns_the_plan_and_the_diff_and_writes_nothing(region):
    result, _text = run_module(openstack_release.main, ARGS, check_mode=True, diff=True)
    assert result["changed"] and not writes(region)
    (report,) = result["control_planes"]
    assert [step["phase"] for step in report["plan"]] == ["identity", "core", "compute"]
    assert result["plan_lines"][0] == "openstack/lab: step 1 (identity): keystone 28.0.0 -> 29.0.0"
    assert result["diff"]["before"]["images"] == {"openstack/lab": OLD}
    assert result["diff"]["after"]["images"] == {"openstack/lab": NEW}
    assert report["running"] == dict((s, "2025.2") for s in OLD)


def test_a_skip_is_refused_naming_every_service_and_nothing_is_written(region):
    result, _text = run_module(openstack_release.main, dict(ARGS, release="2026.2"))
    assert result["failed"] and not writes(region)
    assert result["msg"].startswith("invalid input, nothing was changed")
    assert len(result["problems"]) == len(OLD)


def test_the_steps_move_identity_then_core_then_compute_and_a_rerun_changes_nothing(region):
    result, _text = run_module(openstack_release.main, ARGS)
    assert not result.get("failed"), result
    assert [step["phase"] for step in result["steps"]] == ["identity", "core", "compute"]
    assert region.order[0] == "keystone" and set(region.order[1:3]) == {"glance", "placement"}
    assert set(region.order[3:]) == {"nova", "neutron", "cinder"}
    cp = region.find(CP_API, "ControlPlane", "lab", "openstack")
    assert releases.written_tags(cp) == NEW
    again, _text = run_module(openstack_release.main, ARGS)
    assert not again["changed"] and again["control_planes"][0]["plan"] == [] and len(writes(region)) == 3
    assert again["plan_lines"] == ["openstack/lab: every service runs 2026.1: nothing to move"]


def test_a_terminal_reason_stops_at_its_step_and_the_fixed_rerun_resumes_there(region):
    region.fail["glance"] = "MigrateFailed"
    result, _text = run_module(openstack_release.main, ARGS)
    assert result["failed"]
    assert "step 2 (core) of the move to 2026.1 failed, later steps were not started: openstack/lab glance: " \
        "MigrateFailed" in result["msg"]
    assert [step["phase"] for step in result["steps"]] == ["identity"]
    assert "nova" not in region.order
    del region.fail["glance"]
    resumed, _text = run_module(openstack_release.main, ARGS)
    # The operator retried glance meanwhile (the fake's first look): the run starts at the step left.
    assert [step["phase"] for step in resumed["steps"]] == ["compute"] and resumed["steps"][0]["changed"]
    assert region.order.count("glance") == 1 and set(region.order[3:]) == {"nova", "neutron", "cinder"}


def test_an_infrastructure_not_ready_is_refused_before_the_first_write(region):
    mariadb = region.find(*health.COMPONENT_KINDS["mariadb"][0], name="mariadb", namespace="openstack")
    mariadb["status"] = {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
                                                                  "reason": "GaleraNotReady"}]}
    result, _text = run_module(openstack_release.main, ARGS)
    assert result["failed"] and "its infrastructure is not ready" in result["msg"] and not writes(region)


def test_a_missing_control_plane_is_named_and_nothing_is_written(region):
    result, _text = run_module(openstack_release.main, dict(ARGS, control_planes=ARGS["control_planes"] + [
        {"namespace": "openstack-x", "name": "x"}]))
    assert result["failed"] and "ControlPlane openstack-x/x does not exist" in result["msg"] and not writes(region)


def test_a_tenants_composed_control_plane_gets_its_images_in_its_own_section():
    cp = {"apiVersion": CP_API, "kind": "ControlPlane", "metadata": {"name": "t", "namespace": "openstack-t"},
          "spec": {"openstack": {"keystone": {"enabled": True, "image": {"tag": "28.0.0"}}}}}
    assert releases.services_section(cp) == "openstack" and releases.written_tags(cp)["keystone"] == "28.0.0"
    manifest = releases.release_manifest(cp, {"keystone": {"repository": "r", "tag": "29.0.0"}})
    assert manifest["spec"] == {"openstack": {"keystone": {"image": {"repository": "r", "tag": "29.0.0"}}}}


def test_clusters_move_together_step_by_step(region):
    add_cluster(region, "acme", "openstack-acme")
    result, _text = run_module(openstack_release.main, dict(ARGS, tenants=["acme"]))
    assert not result.get("failed"), result
    assert [(s["control_plane"], s["phase"]) for s in result["steps"]] == [
        ("openstack/lab", "identity"), ("openstack-acme/acme", "identity"), ("openstack/lab", "core"),
        ("openstack-acme/acme", "core"), ("openstack/lab", "compute"), ("openstack-acme/acme", "compute")]
    # both Keystones were written before either cluster's core step
    assert set(region.order[:2]) == {"keystone", "acme/keystone"}
    assert set(region.order[2:6]) == {"glance", "placement", "acme/glance", "acme/placement"}
