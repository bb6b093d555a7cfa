# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters are thin wrappers: they return what module_utils returns and turn
its errors into AnsibleFilterError."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.c5c3.cobaltcore.plugins.filter import cobaltcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files

FILTERS = cobaltcore.FilterModule().filters()
FILTER_DIR = os.path.dirname(cobaltcore.__file__)
REGION = {"name": "eu-de-1", "hypervisor_pools": ["hv-pool-a"], "storage_pools": ["st-pool-a"]}
CLAIM = {
    "apiVersion": "c5c3.io/v1alpha1",
    "kind": "OpenStackCluster",
    "metadata": {"name": "t", "namespace": "tenant-t"},
    "spec": {"region": "eu-de-1", "size": "small",
             "hypervisorClusters": ["hv-pool-a"], "storageClusters": ["st-pool-a"]},
}


def test_filter_names():
    assert sorted(FILTERS) == sorted([
        "validate_claims", "compose_openstack_cluster", "region_model", "size_preset",
        "ceph_caps", "ceph_cluster", "quota_bytes", "tenant_names", "gardener_shoots", "gardener_kubeconfig_paths",
        "gardener_upgrade_order", "ironcore_claim_pools", "ironcore_bmcs", "ironcore_bmc_secrets", "region_control_plane",
        "operator_releases", "network_plan", "cross_cluster_endpoints", "ovn_southbound_service", "tenant_claims",
        "tenant_plan", "tenant_removal", "claim_statuses", "valid_claims", "changed_objects", "decommission_problems",
        "decommission_users", "decommission_release", "scale_in_problems", "scale_in_surplus", "scale_in_nodes"])


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_filter_has_its_documentation(name):
    with open(os.path.join(FILTER_DIR, name + ".yml")) as handle:
        doc = yaml.safe_load(handle)
    assert sorted(doc) == ["DOCUMENTATION", "EXAMPLES", "RETURN"]
    assert doc["DOCUMENTATION"]["name"] == name
    assert doc["DOCUMENTATION"]["options"]["_input"]["required"] is True
    assert "_value" in doc["RETURN"]
    assert "c5c3.cobaltcore." + name in doc["EXAMPLES"]


def test_validate_claims():
    assert FILTERS["validate_claims"]([CLAIM], REGION) == []
    bad = dict(CLAIM, spec=dict(CLAIM["spec"], size="huge"))
    assert FILTERS["validate_claims"]([bad], REGION) == [
        "tenant-t/t spec.size: must be one of small, medium, large, xlarge, got 'huge'"]


def test_compose_openstack_cluster():
    result = FILTERS["compose_openstack_cluster"](CLAIM, REGION)
    assert result["namespace"] == "openstack-t"
    assert list(result["storage"]) == ["st-pool-a"]
    assert FILTERS["compose_openstack_cluster"](CLAIM, REGION, claims=[CLAIM]) == result


def test_compose_openstack_cluster_lists_every_problem():
    bad = dict(CLAIM, spec=dict(CLAIM["spec"], size="huge", storageClusters=["nope"]))
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS["compose_openstack_cluster"](bad, REGION)
    message = str(error.value)
    assert "nothing composed" in message
    assert "- tenant-t/t spec.size: must be one of small" in message
    assert "- tenant-t/t spec.storageClusters[0]: nope is not a storage pool" in message


def test_region_model():
    assert FILTERS["region_model"](REGION)["control_planes"] == [{"name": "eu-de-1-control-plane"}]
    with pytest.raises(AnsibleFilterError, match="invalid region:\n- region hypervisor_pools"):
        FILTERS["region_model"](dict(REGION, hypervisor_pools=[{"name": "x", "workers": 0}]))


def test_size_preset():
    assert FILTERS["size_preset"]("xlarge") == {"mariadb": 5, "keystone": 5, "nova_api": 7}
    with pytest.raises(AnsibleFilterError, match="unknown size"):
        FILTERS["size_preset"]("huge")


def test_ceph_caps():
    assert FILTERS["ceph_caps"](["t-volumes"])["osd"] == "profile rbd pool=t-volumes"
    for bad in ("t-volumes", [], None):
        with pytest.raises(AnsibleFilterError):
            FILTERS["ceph_caps"](bad)


def test_quota_bytes():
    assert FILTERS["quota_bytes"](10000) == 10737418240000
    with pytest.raises(AnsibleFilterError):
        FILTERS["quota_bytes"](-1)


def test_tenant_names():
    assert FILTERS["tenant_names"]("customer-a-prod")["ceph_client"] == "openstack-customer-a-prod"
    with pytest.raises(AnsibleFilterError, match="^invalid tenant name:\n- name: is 54 characters long"):
        FILTERS["tenant_names"]("a" * 54)


def test_real_inventory_hostvars(inventory_path, tenants_dir):
    """Ansible's own groups and HostVars (lazy mappings) build the region."""
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[inventory_path("eu-de-1", "hosts.yml")])
    hostvars = HostVars(inventory=inventory, variable_manager=VariableManager(loader=loader, inventory=inventory),
                        loader=loader)
    region = {"name": "eu-de-1", "groups": inventory.get_groups_dict(), "hostvars": hostvars}
    model = FILTERS["region_model"](region)
    assert [pool["name"] for pool in model["storage_pools"]] == ["st-pool-a", "st-pool-b", "st-pool-encrypted"]
    assert model["hypervisor_pools"][0]["workers"] == 50
    claims = load_claim_files(tenants_dir("eu-de-1"))
    assert FILTERS["validate_claims"](claims, region) == []


def test_tenant_plan_reads_the_storage_pools_fact_from_real_hostvars(inventory_path, tenants_dir):
    """The ControlPlanes get the first storage pool's monitors from its host's fact; a pool without it is skipped."""
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[inventory_path("lab", "hosts.yml")])
    manager = VariableManager(loader=loader, inventory=inventory)
    manager.set_host_facts("st-pool-b", {"cobaltcore_ceph": {"fsid": "f", "monitors": ["127.30.2.10:6789"]}})
    hostvars = HostVars(inventory=inventory, variable_manager=manager, loader=loader)
    region = {"name": "lab", "groups": inventory.get_groups_dict(), "hostvars": hostvars}
    claims = FILTERS["tenant_claims"](tenants_dir("lab"))
    plan = FILTERS["tenant_plan"](claims, region, ceph_fact="cobaltcore_ceph")
    # Both lab tenants have st-pool-a first, which has no fact: no monitors.
    assert all("monitors" not in m["spec"]["storage"]["ceph"]
               for m in plan["control_plane"]["lab-control-plane"] if m["kind"] == "ControlPlane")
    manager.set_host_facts("st-pool-a", {"cobaltcore_ceph": {"fsid": "f", "monitors": ["127.30.1.10:6789"]}})
    plan = FILTERS["tenant_plan"](claims, region, ceph_fact="cobaltcore_ceph")
    assert [m["spec"]["storage"]["ceph"]["monitors"] for m in plan["control_plane"]["lab-control-plane"]
            if m["kind"] == "ControlPlane"] == [["127.30.1.10:6789"]] * 2
    bad = [dict(claims[0], spec=dict(claims[0]["spec"], size="huge"))]
    with pytest.raises(AnsibleFilterError, match="spec.size"):
        FILTERS["tenant_plan"](bad, region)


def test_tenant_removal_filter():
    found = {"st-pool-a": {"side": "storage", "objects": [
        {"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool", "name": "t-volumes", "namespace": "rook-ceph"}]}}
    removal = FILTERS["tenant_removal"]("t", found)
    assert removal["data_loss"] == ["st-pool-a: CephBlockPool rook-ceph/t-volumes"]
    assert [s["step"] for s in removal["steps"]] == ["release-data", "ceph-pools"]


def test_ovn_southbound_service_filter():
    service = FILTERS["ovn_southbound_service"]("tcp:10.100.0.50:6642")
    assert service["spec"]["loadBalancerIP"] == "10.100.0.50" and service["metadata"]["namespace"] == "ovn-system"
    with pytest.raises(AnsibleFilterError, match="invalid OVN Southbound address, nothing changed"):
        FILTERS["ovn_southbound_service"]("ovn-sb.ovn-system.svc:6642")


def test_claim_statuses_and_valid_claims_filters():
    bad = dict(CLAIM, metadata={"name": "u", "namespace": "tenant-u"}, spec=dict(CLAIM["spec"], size="huge"))
    claims = [CLAIM, bad]
    problems = FILTERS["validate_claims"](claims, REGION)
    assert FILTERS["valid_claims"](claims, problems) == [CLAIM]
    statuses = FILTERS["claim_statuses"](claims, problems, "eu-de-1", generations={"tenant-u/u": 2})
    assert [(s["name"], s["observed_generation"], s["conditions"][0]["status"]) for s in statuses] == [
        ("t", None, "False"), ("u", 2, "False")]
    assert FILTERS["claim_statuses"](claims, problems, "eu-de-1", apply_valid=True)[0]["name"] == "u"


def test_tenant_claims_of_one_name_skip_malformed_claims(tmp_path):
    (tmp_path / "a.yaml").write_text("kind: x\n---\ntext\n---\nmetadata: s\n---\nmetadata: {name: b, namespace: n}\n")
    assert FILTERS["tenant_claims"](str(tmp_path), name="b") == [{"metadata": {"name": "b", "namespace": "n"}}]
    assert FILTERS["tenant_claims"](str(tmp_path), name="c") == []
    assert len(FILTERS["tenant_claims"](str(tmp_path))) == 4


def test_changed_objects_filter_fails_on_input_error():
    from ansible.errors import AnsibleFilterError
    assert FILTERS["changed_objects"]([{"changed": True, "results": [{"result": "created"}]}, None]) == 1
    with pytest.raises(AnsibleFilterError, match="cannot count the changed objects"):
        FILTERS["changed_objects"]("not a list")
