# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the preflight checks on the garden and the IronCore cluster: what the region needs from them."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener, ironcore, region_needs
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import preflight

GV = "core.gardener.cloud/v1beta1"


def judged(checks):
    """The preflight's problems as the preflight_problems filter finds them."""
    return preflight.problems(checks, region_needs.problems)


POOL_LABEL, CLASS_LABEL, ZONE_LABEL = "c5c3.io/machine-pool", "c5c3.io/machine-class", "topology.kubernetes.io/zone"
ZONE = "eu-de-1a"
SETTINGS = {"project": "cc", "cloud_profile": {"kind": "CloudProfile", "name": "metal"},
            "credentials_binding": "metal", "provider_type": "ironcore-metal", "kubernetes_version": "1.33",
            "machine_image": {"name": "gardenlinux", "version": "1877.3.0"}, "purpose": "production"}


def inventory():
    pools = {"cp": ("rack-1", "general"), "hv-a": ("rack-1", "kvm"), "st-a": ("rack-2", "storage")}
    hostvars = dict((name, {"cobaltcore_pool": {"ironcore": {"machine_pool": pool, "machine_class": cls}}})
                    for name, (pool, cls) in pools.items())
    hostvars["hv-a"]["cobaltcore_pool"]["zone"] = ZONE  # a hypervisor pool's servers are claimed in its zone
    hostvars["baremetal"] = {"cobaltcore_ironcore": {"machine_pools": ["rack-1", "rack-2"],
                                                     "machine_classes": ["general", "kvm", "storage"]}}
    return {"name": "eu-de-1", "groups": {
        "ironcore": ["baremetal"], "gardener": ["garden"], "management": ["mgmt"], "control_plane": ["cp"],
        "hypervisor_pools": ["hv-a"], "storage_pools": ["st-a"]}, "hostvars": hostvars}


def checks(objects, **extra):
    values = {"kubeconfig": "/k.yaml", "kubeconfig_exists": True, "min_version": "1.31", "max_version": "1.37",
              "cluster_info": {"version": {"gitVersion": "v1.33.4"}, "api_groups": ["core"], "objects": objects},
              "region": inventory()}
    values.update(extra)
    return values


def read(kind, items, name=None, error=None, status=None, api_version=GV):
    return {"api_version": api_version, "kind": kind, "name": name, "items": items, "error": error, "status": status}


# --- IronCore: every pool carried by a BMC or Server ---------------------------------------------

def machine(kind, name, pool, cls, zone=ZONE):
    return {"apiVersion": ironcore.API_VERSION, "kind": kind,
            "metadata": {"name": name, "labels": {POOL_LABEL: pool, CLASS_LABEL: cls, ZONE_LABEL: zone}}}


def ironcore_checks(bmcs=(), servers=(), inventory_bmcs=()):
    return checks([read("BMC", list(bmcs), api_version=ironcore.API_VERSION),
                   read("Server", list(servers), api_version=ironcore.API_VERSION)], bmcs=list(inventory_bmcs))


def test_a_region_without_any_machine_names_every_pool_with_its_machine_pool_and_class():
    """eu-de-1 as shipped: no BMC in the inventory, none registered."""
    assert judged(ironcore_checks()) == [
        "region %s[%s].ironcore: no BMC or Server carries machine pool %s and machine class %s, so no server can be "
        "claimed for %s (IronCore and the inventory's BMCs carry machine pool/class%s nothing)" % (
            key, name, pool, cls + (" and zone %s" % ZONE if zoned else ""), name, " in zone" if zoned else "")
        for key, name, pool, cls, zoned in (("control_planes", "cp", "rack-1", "general", False),
                                            ("hypervisor_pools", "hv-a", "rack-1", "kvm", True),
                                            ("storage_pools", "st-a", "rack-2", "storage", False))]


def test_a_zoned_pool_needs_a_machine_in_its_zone():
    elsewhere = machine("BMC", "b2", "rack-1", "kvm", zone="eu-de-1b")
    others = [machine("BMC", "b1", "rack-1", "general"), machine("Server", "s3", "rack-2", "storage")]
    (problem,) = judged(ironcore_checks(others + [elsewhere]))
    assert problem == (
        "region hypervisor_pools[hv-a].ironcore: no BMC or Server carries machine pool rack-1 and machine class kvm and "
        "zone eu-de-1a, so no server can be claimed for hv-a (IronCore and the inventory's BMCs carry machine "
        "pool/class in zone rack-1/general in eu-de-1a, rack-1/kvm in eu-de-1b, rack-2/storage in eu-de-1a)")
    # An inventory BMC's zone is its Servers' label.
    inventory_bmc = {"name": "b4", "credentials": "rack-1", "machine_pool": "rack-1", "machine_class": "kvm",
                     "zone": ZONE}
    assert judged(ironcore_checks(others + [elsewhere], [], [inventory_bmc])) == []
    assert ironcore.bmcs_from_inventory([inventory_bmc])[0]["labels"] == {
        POOL_LABEL: "rack-1", CLASS_LABEL: "kvm", ZONE_LABEL: ZONE}
    assert "zone" not in ironcore.bmcs_from_inventory([inventory_bmc])[0]


def test_the_cloud_profile_must_offer_the_hypervisor_pools_zone():
    (problem,) = garden(profiles=[profile(regions=[{"name": "eu-de-1", "zones": [{"name": "eu-de-1b"}]}])])
    assert problem == "hv-a.zone: CloudProfile metal offers no zone eu-de-1a in region eu-de-1 (it offers eu-de-1b)"
    (problem,) = garden(profiles=[profile(regions=[{"name": "eu-de-1"}])])
    assert problem == ("hv-a.zone: CloudProfile metal offers no zone eu-de-1a in region eu-de-1 (the region has no "
                       "availability zones)")


def test_each_kind_of_carrier_counts():
    inventory_bmc = {"name": "b1", "credentials": "rack-1", "machine_pool": "rack-1", "machine_class": "general"}
    registered_bmc = machine("BMC", "b2", "rack-1", "kvm")
    server = machine("Server", "s3", "rack-2", "storage")
    assert judged(ironcore_checks([registered_bmc], [server], [inventory_bmc])) == []
    (problem,) = judged(ironcore_checks([registered_bmc], [], [inventory_bmc]))
    assert problem.startswith("region storage_pools[st-a].ironcore: no BMC or Server carries machine pool rack-2 and "
                              "machine class storage, so no server can be claimed for st-a")
    assert problem.endswith("(IronCore and the inventory's BMCs carry machine pool/class rack-1/general, rack-1/kvm)")


def test_a_machine_of_another_class_does_not_carry_a_pool():
    wrong = [machine("Server", "s%d" % n, "rack-1", "kvm") for n in range(3)]
    assert len(judged(ironcore_checks(servers=wrong))) == 2  # cp and st-a


def test_machines_are_not_judged_when_ironcore_does_not_serve_them():
    objects = [read("BMC", [], error="the API server does not serve kind BMC", status=404),
               read("Server", [], error="the API server does not serve kind Server", status=404)]
    assert judged(checks(objects, bmcs=[])) == []
    # Nor on a cluster that is no IronCore host (bmcs not given).
    assert judged(checks([])) == []


# --- the garden: Project, cloud profile, Seed ----------------------------------------------------

def project(phase="Ready"):
    return {"apiVersion": GV, "kind": "Project", "metadata": {"name": "cc"},
            "spec": {"namespace": "garden-cc"}, "status": {"phase": phase}}


def profile(**spec):
    base = {"type": "ironcore-metal", "regions": [{"name": "eu-de-1", "zones": [{"name": ZONE}, {"name": "eu-de-1b"}]}],
            "kubernetes": {"versions": [{"version": "1.33.4"}, {"version": "1.32.8"}]},
            "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1877.3.0"}]}],
            "machineTypes": [{"name": n} for n in ("general", "kvm", "storage")]}
    base.update(spec)
    return {"apiVersion": GV, "kind": "CloudProfile", "metadata": {"name": "metal"}, "spec": base}


def seed(name="s1", region="eu-de-1", provider="ironcore-metal", ready=True, **spec):
    body = {"provider": {"type": provider, "region": region}}
    body.update(spec)
    status = {"lastOperation": {"state": "Succeeded"},
              "conditions": [{"type": "GardenletReady", "status": "True" if ready else "False"}]}
    return {"apiVersion": GV, "kind": "Seed", "metadata": {"name": name}, "spec": body, "status": status}


def garden(project_items=None, profiles=None, seeds=None, settings=None, **extra):
    objects = [read("Project", [project()] if project_items is None else project_items, name="cc"),
               read("CloudProfile", [profile()] if profiles is None else profiles, name="metal"),
               read("Seed", [seed()] if seeds is None else seeds)]
    return judged(checks(objects, gardener=settings or SETTINGS, **extra))


def test_a_garden_with_everything_the_shoots_need_has_no_problem():
    assert garden() == []


def test_a_missing_project_is_named_before_phase_2():
    """What a copy of eu-de-1 met only in phase 2 (`Gardener project cc does not exist`)."""
    assert garden(project_items=[]) == ["gardener.project: Gardener project cc does not exist in the garden"]
    assert garden(project_items=[project("Pending")]) == [
        "gardener.project: Gardener project cc is Pending, not Ready: its namespace garden-cc cannot take Shoots yet"]


def test_the_cloud_profile_must_offer_what_the_shoots_name():
    assert garden(profiles=[]) == ["gardener.cloud_profile: CloudProfile metal does not exist in the garden"]
    offered = profile(type="openstack", regions=[{"name": "eu-de-2"}], kubernetes={"versions": [{"version": "1.32.8"}]},
                      machineTypes=[{"name": "general"}, {"name": "kvm", "usable": False}],
                      machineImages=[{"name": "gardenlinux", "versions": [{"version": "1877.2.0"}]}])
    assert garden(profiles=[offered], seeds=[]) == [
        "gardener.provider_type: ironcore-metal is not the provider type of CloudProfile metal (openstack): Gardener "
        "refuses Shoots of another type",
        "gardener.region: CloudProfile metal offers no region eu-de-1 (it offers eu-de-2)",
        "hv-a.ironcore.machine_class: CloudProfile metal offers no usable machine type kvm (it offers general)",
        "st-a.ironcore.machine_class: CloudProfile metal offers no usable machine type storage (it offers general)",
        "gardener.kubernetes_version: CloudProfile metal offers no Kubernetes 1.33 (it offers 1.32.8)",
        "gardener.machine_image.version: CloudProfile metal offers no gardenlinux 1877.3.0",
        "gardener.region: no Seed can host the Shoots: none of the 0 Seeds is usable (not deleting, visible, gardenlet "
        "ready) for provider ironcore-metal in region eu-de-1"]
    other_image = profile(machineImages=[{"name": "suse-chost", "versions": [{"version": "15.6"}]}])
    assert garden(profiles=[other_image]) == [
        "gardener.machine_image.name: CloudProfile metal offers no machine image gardenlinux (it offers suse-chost)"]


def test_a_namespaced_cloud_profile_is_judged_by_its_merged_spec_in_the_project_namespace():
    settings = dict(SETTINGS, cloud_profile={"kind": "NamespacedCloudProfile", "name": "metal"})
    assert gardener.preflight_reads(settings)[1] == {
        "api_version": GV, "kind": "NamespacedCloudProfile", "field_selector": "metadata.name=metal"}
    mine = {"kind": "NamespacedCloudProfile", "metadata": {"name": "metal", "namespace": "garden-cc"},
            "spec": {"parent": {"kind": "CloudProfile", "name": "base"}}, "status": {"cloudProfileSpec": profile()["spec"]}}
    theirs = dict(copy.deepcopy(mine), metadata={"name": "metal", "namespace": "garden-other"})
    objects = [read("Project", [project()], name="cc"), read("NamespacedCloudProfile", [theirs, mine]),
               read("Seed", [seed()])]
    assert judged(checks(objects, gardener=settings)) == []
    objects[1] = read("NamespacedCloudProfile", [theirs])
    assert judged(checks(objects, gardener=settings)) == [
        "gardener.cloud_profile: NamespacedCloudProfile metal does not exist in the garden"]


@pytest.mark.parametrize("unusable", [
    seed(ready=False),
    dict(seed(), status={"conditions": [{"type": "GardenletReady", "status": "True"}]}),  # never reconciled
    seed(settings={"scheduling": {"visible": False}}),
    dict(seed(), metadata={"name": "s1", "deletionTimestamp": "2026-12-02T00:00:00Z"}),
    seed(backup={"provider": "s3"}),  # backs up, but no SeedBackupBucketsReady
    seed(region="eu-de-2"),
    seed(provider="openstack"),
])
def test_gardener_scheduler_would_find_no_seed(unusable):
    (problem,) = garden(seeds=[unusable])
    assert problem.startswith("gardener.region: no Seed can host the Shoots: none of the 1 Seeds is usable")


def test_the_strategy_and_the_cloud_profile_decide_which_seeds_count():
    far = seed(region="eu-de-2")
    assert garden(seeds=[far], seed_strategy="MinimalDistance") == []
    assert garden(seeds=[far], settings=dict(SETTINGS, purpose="testing")) == []
    other = seed(provider="openstack")
    selecting = profile(seedSelector={"providerTypes": ["openstack"]})
    assert garden(seeds=[other], profiles=[selecting], seed_strategy="MinimalDistance") == []
    labelled = profile(seedSelector={"matchLabels": {"tier": "gold"}})
    assert len(garden(profiles=[labelled])) == 1
    gold = dict(seed(), metadata={"name": "s1", "labels": {"tier": "gold"}})
    assert garden(profiles=[labelled], seeds=[gold]) == []
    backed_up = seed(backup={"provider": "s3"})
    backed_up["status"]["conditions"].append({"type": "SeedBackupBucketsReady", "status": "True"})
    assert garden(seeds=[backed_up]) == []


def test_seeds_a_user_may_not_list_are_not_judged_but_a_forbidden_project_is_a_problem():
    objects = [read("Project", [], name="cc", error="projects is forbidden", status=403),
               read("CloudProfile", [profile()], name="metal"),
               read("Seed", [], error="seeds is forbidden", status=403)]
    assert judged(checks(objects, gardener=SETTINGS)) == [
        "gardener.project: cannot read Project cc: projects is forbidden"]


def test_settings_phase_2_would_refuse_are_problems_of_the_garden():
    assert garden(settings=dict(SETTINGS, project="much-too-long")) == [
        "gardener.project: 'much-too-long' is not a DNS-1123 label of at most 10 characters"]


def test_a_bad_strategy_is_bad_input():
    with pytest.raises(InputError) as error:
        garden(seed_strategy="Nearest")
    assert error.value.problems == ["seed_strategy: 'Nearest' is not one of SameRegion, MinimalDistance"]


def test_what_the_preflight_reads_by_inventory_group():
    assert region_needs.reads(["management"], SETTINGS) == []
    assert [r["kind"] for r in region_needs.reads(["ironcore"], SETTINGS)] == ["BMC", "Server"]
    assert region_needs.reads(["gardener"], SETTINGS) == [
        {"api_version": GV, "kind": "Project", "name": "cc"},
        {"api_version": GV, "kind": "CloudProfile", "name": "metal"},
        {"api_version": GV, "kind": "Seed"}]
    assert region_needs.reads(["gardener"], {}) == []
    # The constant is never handed out to be changed.
    region_needs.reads(["ironcore"])[0]["name"] = "x"
    assert "name" not in ironcore.PREFLIGHT_READS[0]
