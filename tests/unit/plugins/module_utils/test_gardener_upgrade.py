# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Shoots' Kubernetes in the seed's order: the plan, Gardener's version rules, phase 2's hold."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener_upgrade as upgrade

PROFILE = {"kind": "CloudProfile", "metadata": {"name": "metal"}, "spec": {
    "kubernetes": {"versions": [
        {"version": "1.36.0", "classification": "preview"},
        {"version": "1.35.1", "classification": "supported"},
        {"version": "1.35.0", "classification": "supported"},
        {"version": "1.34.5", "classification": "deprecated"},
        {"version": "1.34.3", "classification": "supported"},
        {"version": "1.33.4", "classification": "supported"},
        {"version": "1.33.9", "classification": "supported", "expirationDate": "2020-01-01T00:00:00Z"}]},
    "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1877.3.0"}]}]}}
REGION = {"control_planes": [{"name": "lab-control-plane", "gardener": {"shoot_name": "lab-cp"}}],
          "hypervisor_pools": [{"name": "hv-pool-a"}, {"name": "hv-pool-b"}],
          "storage_pools": [{"name": "st-pool-a"}, {"name": "st-pool-b"}]}
SHOOTS = gardener.upgrade_order(REGION)


def shoot(name, version="1.33.4", image="1877.3.0", **meta):
    return {"metadata": dict({"name": name}, **meta), "spec": {
        "cloudProfile": {"kind": "CloudProfile", "name": "metal"}, "kubernetes": {"version": version},
        "provider": {"workers": [{"name": "worker", "machine": {"image": {"name": "gardenlinux", "version": image}}}]}}}


def plan(version, live=None, minor_steps=1, profile=None):
    profile = profile or PROFILE
    live = live or dict((s["name"], shoot(s["name"])) for s in SHOOTS)
    return upgrade.plan(SHOOTS, live, dict((n, profile) for n in live), version, minor_steps)


def test_the_upgrade_order_is_control_plane_then_storage_then_hypervisor_pools():
    assert [(s["name"], s["cluster"], s["stage"], s["version"]) for s in SHOOTS] == [
        ("lab-cp", "lab-control-plane", "control plane", None), ("st-pool-a", "st-pool-a", "storage pool", None),
        ("st-pool-b", "st-pool-b", "storage pool", None), ("hv-pool-a", "hv-pool-a", "hypervisor pool", None),
        ("hv-pool-b", "hv-pool-b", "hypervisor pool", None)]


def test_a_pools_own_version_is_its_target_and_a_shoot_without_one_stays():
    region = dict(REGION, hypervisor_pools=[{"name": "hv-pool-a", "gardener": {"kubernetes_version": "1.33"}},
                                            {"name": "hv-pool-b"}])
    order = gardener.upgrade_order(region, {"kubernetes_version": "1.34"})
    assert [s["version"] for s in order] == ["1.34", "1.34", "1.34", "1.33", "1.34"]
    live = dict((s["name"], shoot(s["name"])) for s in order)
    steps, problems = upgrade.plan(order, live, dict((n, PROFILE) for n in live))
    moved = [m["name"] for s in steps for m in s["moves"]]
    assert problems == [] and moved == ["lab-cp", "st-pool-a", "st-pool-b", "hv-pool-b"]
    assert upgrade.plan(SHOOTS, live, dict((n, PROFILE) for n in live)) == ([], [])
    assert upgrade.plan_lines([]) == ["every Shoot runs the Kubernetes version it is to run: nothing to move"]


def test_one_minor_moves_each_pool_in_its_own_step_to_the_newest_supported_patch():
    steps, problems = plan("1.34")
    assert problems == []
    assert upgrade.plan_lines(steps, "1.34") == [
        "step 1: Kubernetes 1.34 on the control plane: lab-cp (1.33.4 -> 1.34.3)",
        "step 2: Kubernetes 1.34 on the storage pool: st-pool-a (1.33.4 -> 1.34.3)",
        "step 3: Kubernetes 1.34 on the storage pool: st-pool-b (1.33.4 -> 1.34.3)",
        "step 4: Kubernetes 1.34 on the hypervisor pool: hv-pool-a (1.33.4 -> 1.34.3)",
        "step 5: Kubernetes 1.34 on the hypervisor pool: hv-pool-b (1.33.4 -> 1.34.3)"]


def test_several_minors_move_in_consecutive_steps_when_minor_steps_allows_it():
    steps, problems = plan("1.35", minor_steps=2)
    assert problems == []
    assert [(s["minor"], [(m["name"], m["from"], m["to"]) for m in s["moves"]]) for s in steps] == [
        ("1.34", [("lab-cp", "1.33.4", "1.34.3")]), ("1.34", [("st-pool-a", "1.33.4", "1.34.3")]),
        ("1.34", [("st-pool-b", "1.33.4", "1.34.3")]), ("1.34", [("hv-pool-a", "1.33.4", "1.34.3")]),
        ("1.34", [("hv-pool-b", "1.33.4", "1.34.3")]),
        ("1.35", [("lab-cp", "1.34.3", "1.35.1")]), ("1.35", [("st-pool-a", "1.34.3", "1.35.1")]),
        ("1.35", [("st-pool-b", "1.34.3", "1.35.1")]), ("1.35", [("hv-pool-a", "1.34.3", "1.35.1")]),
        ("1.35", [("hv-pool-b", "1.34.3", "1.35.1")])]


def test_a_skip_beyond_minor_steps_a_downgrade_and_another_major_are_refused_naming_each_shoot():
    unused, problems = plan("1.35")
    assert len(problems) == 5 and "Shoot lab-cp spec.kubernetes.version: runs 1.33.4; 1.35 is 2 minor versions ahead " \
        "and minor_steps allows 1" in [str(p) for p in problems][0]
    live = dict((s["name"], shoot(s["name"])) for s in SHOOTS)
    live["hv-pool-b"] = shoot("hv-pool-b", "1.34.3")
    unused, problems = plan("1.33", live)
    assert [str(p) for p in problems] == ["Shoot hv-pool-b spec.kubernetes.version: runs 1.34.3; a downgrade to 1.33 "
                                          "is not supported (gardener-apiserver refuses it)"]
    unused, problems = plan("2.0", live)
    assert len(problems) == 5 and "is another major version" in str(problems[0])


def test_a_resumed_move_starts_where_the_shoots_are_and_a_finished_one_plans_nothing():
    live = dict((s["name"], shoot(s["name"], "1.34.3")) for s in SHOOTS)
    live["hv-pool-a"] = shoot("hv-pool-a")
    live["hv-pool-b"] = shoot("hv-pool-b")
    steps, unused = plan("1.34", live)
    assert [[m["name"] for m in s["moves"]] for s in steps] == [["hv-pool-a"], ["hv-pool-b"]]
    live = dict((s["name"], shoot(s["name"], "1.34.3")) for s in SHOOTS)
    steps, problems = plan("1.34", live)
    assert steps == [] and problems == []
    assert upgrade.plan_lines(steps, "1.34") == ["every Shoot runs Kubernetes 1.34: nothing to move"]
    # A short target takes any patch of its minor: a Shoot Gardener's maintenance moved to a newer patch stays.
    live["lab-cp"] = shoot("lab-cp", "1.34.5")
    assert plan("1.34", live) == ([], [])


def test_a_patch_target_is_moved_to_when_offered_and_refused_when_not():
    steps, unused = plan("1.33.9")  # expired: Gardener still takes it on update
    assert [m["to"] for s in steps for m in s["moves"]] == ["1.33.9"] * 5
    unused, problems = plan("1.34.4")
    assert "CloudProfile metal does not offer 1.34.4" in str(problems[0])


def test_a_minor_without_a_supported_patch_is_refused_unless_a_preview_patch_is_named():
    unused, problems = plan("1.36", live=dict((s["name"], shoot(s["name"], "1.35.1")) for s in SHOOTS))
    assert "CloudProfile metal offers no supported Kubernetes 1.36 patch" in str(problems[0])
    steps, problems = plan("1.36.0", live=dict((s["name"], shoot(s["name"], "1.35.1")) for s in SHOOTS))
    assert problems == [] and steps[0]["moves"][0]["to"] == "1.36.0"
    # An intermediate minor: the move goes through it.
    versions = [{"version": "1.35.1"}, {"version": "1.34.1", "classification": "preview"}]
    profile = {"spec": {"kubernetes": {"versions": versions}}}
    unused, problems = plan("1.35", minor_steps=2, profile=profile)
    assert "offers no supported Kubernetes 1.34 patch" in str(problems[0]) and "the move to 1.35 goes through it" in \
        str(problems[0])


def test_a_machine_images_kubelet_constraint_refuses_the_step():
    profile = {"metadata": {"name": "metal"}, "spec": dict(PROFILE["spec"], machineImages=[{
        "name": "gardenlinux", "versions": [{"version": "1877.3.0", "kubeletVersionConstraint": "< 1.35"}]}])}
    assert plan("1.34", profile=profile)[1] == []
    unused, problems = plan("1.35", minor_steps=2, profile=profile)
    assert str(problems[0]) == ("Shoot lab-cp spec.provider.workers[0].machine.image: machine image "
                                "'gardenlinux@1877.3.0' does not support kubelet version '1.35.1', supported kubelet "
                                "versions by this machine image version: '< 1.35'")


def test_a_missing_or_deleting_shoot_and_a_bad_target_are_refused():
    live = dict((s["name"], shoot(s["name"])) for s in SHOOTS if s["name"] != "st-pool-b")
    live["hv-pool-a"] = shoot("hv-pool-a", deletionTimestamp="2026-12-05T00:00:00Z")
    unused, problems = plan("1.34", live)
    assert [str(p) for p in problems] == [
        "shoots: Shoot st-pool-b does not exist: phase 2 (playbooks/clusters.yml) creates it",
        "Shoot hv-pool-a metadata.deletionTimestamp: the Shoot is being deleted"]
    assert [str(p) for p in plan("1.x")[1]][0] == "Shoot lab-cp version: '1.x' is not <major>.<minor>[.<patch>]"


def test_classification_and_gardeners_default_for_a_short_version():
    at = datetime.datetime(2026, 12, 5, tzinfo=datetime.timezone.utc)
    offered = gardener.offered_kubernetes(PROFILE, at)
    assert offered["1.33.9"] == "expired" and offered["1.36.0"] == "preview" and offered["1.34.5"] == "deprecated"
    assert gardener.default_patch(offered, (1, 34)) == "1.34.3"
    assert gardener.default_patch(offered, (1, 33)) == "1.33.4"
    assert gardener.default_patch(offered, (1, 36)) is None


@pytest.mark.parametrize("live, asked, sent, held", [
    ("1.33.4", "1.33", "1.33.4", False),      # the minor it runs: the patch it runs
    ("1.33.4", "1.34", "1.33.4", True),       # held: upgrade.yml moves it
    ("1.33.4", "1.33.6", "1.33.4", True),     # a patch too
    ("1.33.4", "1.33.4", "1.33.4", False),
    ("1.33.4", "1.32", "1.32", False),        # lower: sent, for update_problems to refuse
    ("1.33.4", "1.33.2", "1.33.2", False),
])
def test_phase_2_holds_an_existing_shoots_version(live, asked, sent, held):
    assert gardener.held_kubernetes_version({"kubernetes": {"version": live}}, {"kubernetes": {"version": asked}}) == (
        sent, held)
