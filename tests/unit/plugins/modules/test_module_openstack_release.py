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
ARGS = {"name": "lab", "release": "2026.1", "wait_timeout": 5, "wait_sleep": 1}


def service_status(tag, generation=1, **extra):
    status = {"observedGeneration": generation, "installedRelease": tag, "upgradePhase": "",
              "conditions": [{"type": "Ready", "status": "True", "reason": "AllReady"}]}
    status.update(extra)
    return status


@pytest.fixture
def region(cluster, monkeypatch):  # noqa: F811
    add_control_plane(cluster)
    for component in INFRA:
        add_owned(cluster, component)
    for service, tag in OLD.items():
        obj = add_owned(cluster, service, service_status(tag))
        obj["spec"] = {"image": {"repository": "ghcr.io/c5c3/%s" % service, "tag": tag}}
        cluster.objects[(obj["apiVersion"], obj["kind"], "openstack", service)] = obj
    cluster.order = []
    cluster.fail = {}
    # The operators: a service CR takes the ControlPlane's tag and, on the next look, runs it.
    real = c5c3_api.release_services

    def operators(client, control_plane, services=None):
        cp = cluster.find(CP_API, "ControlPlane", "lab", "openstack")
        written = releases.written_tags(cp)
        for service, obj in real(client, cp).items():
            stored = cluster.find(obj["apiVersion"], obj["kind"], service, "openstack")
            tag = written.get(service)
            if tag and stored["spec"]["image"]["tag"] != tag:
                stored["spec"]["image"]["tag"] = tag
                cluster.order.append(service)
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
    assert [step["phase"] for step in result["plan"]] == ["identity", "core", "compute"]
    assert result["diff"]["before"]["images"] == OLD and result["diff"]["after"]["images"] == NEW
    assert result["running"] == dict((s, "2025.2") for s in OLD)


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
    assert not again["changed"] and again["plan"] == [] and len(writes(region)) == 3


def test_a_terminal_reason_stops_at_its_step_and_the_fixed_rerun_resumes_there(region):
    region.fail["glance"] = "MigrateFailed"
    result, _text = run_module(openstack_release.main, ARGS)
    assert result["failed"]
    assert "step 2 (core) of the move to 2026.1 failed, later steps were not started: glance: MigrateFailed" \
        in result["msg"]
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
