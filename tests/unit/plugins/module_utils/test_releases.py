# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release of an OpenStack cluster: the steps of a hop in seed 003's order, and the refusals."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases

OLD, NEW = releases.TAGS["2025.2"], releases.TAGS["2026.1"]


def test_a_hop_moves_identity_then_core_then_compute():
    result = releases.plan(dict(OLD), "2026.1")
    assert result["to"] == "2026.1" and set(result["from"].values()) == {"2025.2"}
    assert [(step["phase"], sorted(step["services"])) for step in result["steps"]] == [
        ("identity", ["keystone"]), ("core", ["glance", "placement"]), ("compute", ["cinder", "neutron", "nova"])]
    assert result["steps"][0]["services"]["keystone"] == {"from": "28.0.0", "to": "29.0.0"}


def test_a_plan_made_again_after_some_steps_starts_at_the_first_step_left():
    tags = dict(OLD, keystone=NEW["keystone"], glance=NEW["glance"])  # interrupted inside core
    steps = releases.plan(tags, "2026.1")["steps"]
    assert [(step["phase"], sorted(step["services"])) for step in steps] == [
        ("core", ["placement"]), ("compute", ["cinder", "neutron", "nova"])]
    assert releases.plan(dict(NEW), "2026.1")["steps"] == []


def test_a_cluster_without_some_services_moves_those_it_has_and_ignores_the_optional_ones():
    tags = {"keystone": OLD["keystone"], "glance": OLD["glance"], "cortex": "0.5.0"}
    steps = releases.plan(tags, "2026.1")["steps"]
    assert [sorted(step["services"]) for step in steps] == [["keystone"], ["glance"]]


def test_a_downgrade_a_skip_and_an_unknown_tag_are_refused_together_naming_both_releases():
    tags = dict(NEW, nova=OLD["nova"], cinder="26.0.0")
    with pytest.raises(InputError) as raised:
        releases.plan(tags, "2025.2", subject="ControlPlane openstack/controlplane")
    problems = raised.value.problems
    assert "ControlPlane openstack/controlplane services.cinder.image.tag: cinder runs '26.0.0', the tag of no " \
           "release this collection knows (2025.2, 2026.1, 2026.2)" in problems
    assert any(p.startswith("ControlPlane openstack/controlplane services.keystone.image.tag: keystone runs 2026.1; "
                            "a downgrade to 2025.2 is not possible") for p in problems)
    assert not any("nova" in p for p in problems)  # on the target already
    with pytest.raises(InputError, match=r"services.keystone.image.tag: keystone runs 2025.2; 2026.2 skips 2026.1: "
                                         r"move one release at a time"):
        releases.plan(dict(OLD), "2026.2")
    assert [sorted(step["services"]) for step in releases.plan(dict(NEW), "2026.2")["steps"]][0] == ["keystone"]


@pytest.mark.parametrize("target, message", [
    ("2026.3", "'2026.3' is no OpenStack release"),
    ("latest", "'latest' is no OpenStack release"),
    ("2024.2", "2024.2 is not a release this collection knows"),
])
def test_a_target_that_is_no_known_release_is_refused(target, message):
    with pytest.raises(InputError, match=message):
        releases.plan(dict(OLD), target)


def test_release_names_and_successors():
    assert releases.parse("2025.2") == (2025, 2) and releases.parse("2025.3") is None
    assert releases.successor("2025.2") == "2026.1" and releases.successor("2026.1") == "2026.2"
    assert releases.release_of("keystone", "29.0.0") == "2026.1" and releases.release_of("keystone", "1") is None


def test_a_patch_release_counts_as_its_series_and_is_never_moved_back_to_the_first_tag():
    assert releases.release_of("keystone", "28.0.2") == "2025.2" and releases.release_of("nova", "33.0.2") == "2026.1"
    tags = dict(OLD, keystone="28.1.0", nova="32.2.1")
    result = releases.plan(tags, "2026.1")
    assert result["steps"][0]["services"]["keystone"] == {"from": "28.1.0", "to": "29.0.0"}
    assert releases.plan(dict(NEW, keystone="29.1.0"), "2026.1")["steps"] == []


def _service(tag, installed=None, phase="", generation=2, observed=2, **conditions):
    return {"metadata": {"generation": generation}, "spec": {"image": {"tag": tag}},
            "status": {"installedRelease": installed, "upgradePhase": phase, "observedGeneration": observed,
                       "conditions": [dict(type=t, status=s, reason=r, message="m") for t, (s, r) in conditions.items()]}}


def test_a_rollout_is_done_only_once_the_new_tag_is_installed_and_ready_for_the_generation():
    ready = dict(Ready=("True", "AllReady"), DatabaseReady=("True", "DatabaseSynced"))
    assert releases.rollout(_service("29.0.0", "29.0.0", **ready), "29.0.0")[0] == releases.DONE
    # observedGeneration is written on every status write: the old release still installed is not done
    assert releases.rollout(_service("29.0.0", "28.0.0", **ready), "29.0.0")[0] == releases.RUNNING
    assert releases.rollout(_service("29.0.0", "29.0.0", observed=1, **ready), "29.0.0")[0] == releases.RUNNING
    running = releases.rollout(_service("29.0.0", "28.0.0", "Migrating", Ready=("False", "NotAllReady"),
                                        DatabaseReady=("False", "MigrateInProgress")), "29.0.0")
    assert running == (releases.RUNNING, "Migrating 28.0.0 -> 29.0.0")
    assert releases.rollout({"metadata": {}}, "29.0.0") == (releases.RUNNING, "waiting for its operator")


@pytest.mark.parametrize("reason", releases.UPGRADE_FAILURES)
def test_a_rollout_fails_on_upstreams_terminal_database_reasons(reason):
    verdict = releases.rollout(_service("29.0.0", "28.0.0", "Migrating", Ready=("False", "NotAllReady"),
                                        DatabaseReady=("False", reason)), "29.0.0")
    assert verdict == (releases.FAILED, "%s: m" % reason)


def test_the_release_manifest_carries_every_image_under_its_own_manager_and_the_plan_reads_as_steps():
    cp = {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
          "metadata": {"name": "cp", "namespace": "openstack", "resourceVersion": "7"}, "spec": {"x": 1}}
    manifest = releases.release_manifest(cp, {"nova": {"repository": "r/nova", "tag": "32.1.0"},
                                              "keystone": {"repository": "r/keystone", "tag": "29.0.0"}})
    assert manifest == {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
                        "metadata": {"name": "cp", "namespace": "openstack"},
                        "spec": {"services": {"keystone": {"image": {"repository": "r/keystone", "tag": "29.0.0"}},
                                              "nova": {"image": {"repository": "r/nova", "tag": "32.1.0"}}}}}
    assert releases.plan_lines(releases.plan(dict(OLD), "2026.1"))[0] == "step 1 (identity): keystone 28.0.0 -> 29.0.0"
    assert releases.plan_lines(releases.plan(dict(NEW), "2026.1")) == ["every service runs 2026.1: nothing to move"]
