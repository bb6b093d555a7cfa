# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shoots from the region model, Gardener's update rules and admin kubeconfig handling."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import datetime

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

SETTINGS = {"project": "cc", "cloud_profile": "ironcore-metal", "credentials_binding": "metal",
            "provider_type": "ironcore-metal", "kubernetes_version": "1.33",
            "machine_image": {"name": "gardenlinux", "version": "1877.3.0"},
            "networking": {"type": "calico", "pods": "100.64.0.0/12"}}
REGION = {"name": "eu-de-1",
          "control_planes": [{"name": "eu-de-1-control-plane", "workers": 3, "ironcore": {"machine_class": "general"},
                              "gardener": {"shoot_name": "eu-de-1-cp"}}],
          "hypervisor_pools": [{"name": "hv-pool-a", "workers": 5, "zone": "eu-de-1a", "ironcore": {"machine_class": "kvm"},
                                "gardener": {"networking": {"nodes": "10.1.0.0/24"}, "kubernetes_version": "1.32"}}],
          "storage_pools": [{"name": "st-pool-a", "workers": 2, "ironcore": {"machine_class": "storage"}}]}


def shoots(region=None, settings=None):
    return gardener.shoots(build_region(region or REGION).to_dict(), settings or SETTINGS)


def test_one_shoot_per_cluster_with_workers_and_settings():
    result = dict((s["name"], s) for s in shoots())
    assert sorted(result) == ["eu-de-1-cp", "hv-pool-a", "st-pool-a"]
    hv = result["hv-pool-a"]
    assert hv["cluster"] == "hv-pool-a"
    assert hv["spec"]["cloudProfile"] == {"kind": "CloudProfile", "name": "ironcore-metal"}
    assert hv["spec"]["region"] == "eu-de-1"
    assert hv["spec"]["credentialsBindingName"] == "metal"
    assert hv["spec"]["provider"]["workers"] == [{
        "name": "worker", "minimum": 5, "maximum": 5, "zones": ["eu-de-1a"],
        "machine": {"type": "kvm", "architecture": "amd64", "image": {"name": "gardenlinux", "version": "1877.3.0"}}}]
    assert "zones" not in result["st-pool-a"]["spec"]["provider"]["workers"][0]  # a pool without a zone: none
    assert hv["spec"]["networking"] == {"type": "calico", "pods": "100.64.0.0/12", "nodes": "10.1.0.0/24"}
    assert hv["spec"]["kubernetes"] == {"version": "1.32"}
    assert result["st-pool-a"]["spec"]["kubernetes"] == {"version": "1.33"}
    assert result["eu-de-1-cp"]["cluster"] == "eu-de-1-control-plane"
    manifest = gardener.shoot_manifest(hv, "garden-cc")
    assert manifest["metadata"]["labels"][naming.CLUSTER_LABEL] == "hv-pool-a"
    assert manifest["metadata"]["namespace"] == "garden-cc"


def test_every_problem_is_reported_at_once():
    region = dict(REGION, control_planes=[{"name": "eu-de-1-control-plane", "ironcore": {"machine_class": "g"}}],
                  hypervisor_pools=[{"name": "hv-pool-a"}, {"name": "hv-pool-b", "ironcore": {"machine_class": "k"},
                                                            "gardener": {"shoot_name": "hv-pool-a"}}])
    with pytest.raises(InputError) as error:
        shoots(region, dict(SETTINGS, project="Not-Valid", credentials_binding=None))
    text = "\n".join(error.value.problems)
    assert "gardener.credentials_binding: is required" in text
    assert "gardener.project: 'Not-Valid'" in text
    assert "hv-pool-a.ironcore.machine_class: is required" in text
    assert ("hv-pool-a.zone: is required for a hypervisor pool: the hypervisor operator onboards a Node only with the "
            "label topology.kubernetes.io/zone, the Nova availability zone of its Hypervisor") in text
    with pytest.raises(InputError) as error:
        shoots(region, SETTINGS)
    text = "\n".join(error.value.problems)
    assert ("eu-de-1-control-plane.gardener.shoot_name: Shoot eu-de-1-control-plane in project cc is too long: "
            "Gardener allows 21 characters for project and Shoot name together, this is 23") in text
    assert "gardener.shoot_name: hv-pool-a is the Shoot of several clusters" in text


@pytest.mark.parametrize("region", ["eu-de-1", "us-east-1", "lab"])
def test_shipped_inventories_compose_valid_shoots(inventory_of, region):
    inventory = inventory_of(region)
    settings = inventory["hostvars"]["garden"]["cobaltcore_gardener"]
    result = gardener.shoots(build_region(inventory).to_dict(), settings)
    assert len(result) == sum(len(inventory["groups"][g]) for g in ("control_plane", "hypervisor_pools", "storage_pools"))
    for shoot in result:
        assert len(settings["project"]) + len(shoot["name"]) <= 21


@pytest.mark.parametrize("change, fragment", [
    ({"region": "other"}, "spec.region: field is immutable"),
    ({"provider": {"type": "aws"}}, "spec.provider.type: field is immutable"),
    ({"networking": {"type": "cilium"}}, "spec.networking.type: field is immutable"),
    ({"networking": {"pods": "10.0.0.0/8"}}, "spec.networking.pods: field is immutable"),
    ({"kubernetes": {"version": "1.31"}}, "spec.kubernetes.version: kubernetes version downgrade is not supported "
                                          "(1.32.2 to 1.31)"),
    ({"kubernetes": {"version": "1.32.1"}}, "spec.kubernetes.version: kubernetes version downgrade is not supported"),
    ({"kubernetes": {"version": "1.34"}}, "spec.kubernetes.version: kubernetes version upgrade cannot skip a minor "
                                          "version (1.32.2 to 1.34)"),
])
def test_update_problems(change, fragment):
    live = {"region": "eu", "provider": {"type": "metal"}, "networking": {"type": "calico", "pods": "100.64.0.0/12"},
            "kubernetes": {"version": "1.32.2"}}
    desired = dict(live)
    desired.update(change)
    problems = gardener.update_problems("hv", live, desired)
    assert len(problems) == 1 and problems[0].startswith("Shoot hv " + fragment), problems


def test_a_workers_zones_may_only_grow_at_their_end():
    def spec(*zones):
        worker = {"name": "worker", "machine": {"type": "kvm"}}
        if zones:
            worker["zones"] = list(zones)
        return {"provider": {"type": "ironcore-metal", "workers": [worker]}}
    assert gardener.update_problems("hv", spec(), spec("a")) == []          # a Shoot of before zones gets its zone
    assert gardener.update_problems("hv", spec("a"), spec("a", "b")) == []
    assert gardener.update_problems("hv", spec("a"), spec("a")) == []
    for live, desired in ((spec("a"), spec("b")), (spec("a", "b"), spec("a")), (spec("a"), spec())):
        (problem,) = gardener.update_problems("hv", live, desired)
        assert problem.startswith("Shoot hv spec.provider.workers[0].zones: field is immutable (the zones of worker "
                                  "worker are %s" % ", ".join(live["provider"]["workers"][0]["zones"])), problem
    # A new worker pool takes any zone.
    other = {"provider": {"workers": [{"name": "other", "zones": ["x"]}]}}
    assert gardener.update_problems("hv", spec("a"), other) == []


@pytest.mark.parametrize("version", ["1.32", "1.32.2", "1.32.5", "1.33", "1.33.1"])
def test_allowed_updates(version):
    live = {"kubernetes": {"version": "1.32.2"}, "networking": {"type": "calico"}}
    assert gardener.update_problems("hv", live, {"kubernetes": {"version": version},
                                                 "networking": {"type": "calico", "nodes": "10.0.0.0/24"}}) == []


def _kubeconfig(server, not_after):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, u"admin")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(minutes=1)).not_valid_after(not_after)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"client-certificate-data": base64.b64encode(pem).decode()}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]})


def test_kubeconfig_facts_and_renewal():
    now = gardener.now()
    later = now + datetime.timedelta(hours=6)
    facts = gardener.kubeconfig_facts(_kubeconfig("https://api.hv", later))
    assert facts["server"] == "https://api.hv"
    assert abs((facts["expires"] - later).total_seconds()) < 1
    shoot = {"status": {"advertisedAddresses": [{"name": "external", "url": "https://api.hv"}]}}
    assert gardener.renewal_reason(facts, shoot, 3600, at=now) is None
    assert "expires in" in gardener.renewal_reason(facts, shoot, 3600, at=later - datetime.timedelta(minutes=30))
    moved = {"status": {"advertisedAddresses": [{"name": "external", "url": "https://api.other"}]}}
    assert "points at https://api.hv" in gardener.renewal_reason(facts, moved, 3600, at=now)
    with pytest.raises(InputError, match="^kubeconfig kind: is not Config$"):
        gardener.kubeconfig_facts("kind: Secret")
    with pytest.raises(InputError, match="^kubeconfig: is not YAML$"):
        gardener.kubeconfig_facts("kind: [")


def test_admin_kubeconfig_request_and_answer():
    assert gardener.admin_kubeconfig_request(600) == {
        "apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest",
        "spec": {"expirationSeconds": 600}}
    text, expires = gardener.admin_kubeconfig_from(
        {"status": {"kubeconfig": base64.b64encode(b"kind: Config").decode(), "expirationTimestamp": "T"}})
    assert (text, expires) == ("kind: Config", "T")
    with pytest.raises(InputError, match="^status.kubeconfig: is missing"):
        gardener.admin_kubeconfig_from({"status": {}})


def test_kubeconfig_paths_come_from_each_clusters_host():
    result = gardener.kubeconfig_paths(shoots(), {"eu-de-1-control-plane": {"cobaltcore_kubeconfig": "/k/cp.yaml"},
                                                  "hv-pool-a": {"cobaltcore_kubeconfig": "/k/hv.yaml"},
                                                  "st-pool-a": {"cobaltcore_kubeconfig": "/k/st.yaml"}})
    assert result == [{"name": "eu-de-1-cp", "path": "/k/cp.yaml"}, {"name": "hv-pool-a", "path": "/k/hv.yaml"},
                      {"name": "st-pool-a", "path": "/k/st.yaml"}]
    with pytest.raises(InputError) as error:
        gardener.kubeconfig_paths(shoots(), {})
    assert error.value.problems[0] == ("hostvars.eu-de-1-control-plane.cobaltcore_kubeconfig: is not set, so the "
                                       "kubeconfig of Shoot eu-de-1-cp has no path")


def test_a_hypervisor_pools_shoot_has_its_planned_underlay_as_node_network():
    """The gardenlet gives Nodes their InternalIP in spec.networking.nodes; OVN's geneve addresses are
    those (docs/network.md), so the Shoot carries the pool's planned underlay."""
    region = dict(REGION, hypervisor_pools=[
        {"name": "hv-pool-a", "workers": 2, "zone": "a", "ironcore": {"machine_class": "kvm"},
         "network": {"underlay": "10.20.1.0/24", "encapsulation": "10.20.1.10-10.20.1.250"}},
        {"name": "hv-pool-b", "workers": 1, "zone": "a", "ironcore": {"machine_class": "kvm"}}])
    result = dict((s["name"], s["spec"]["networking"]) for s in shoots(region))
    assert result["hv-pool-a"] == {"type": "calico", "pods": "100.64.0.0/12", "nodes": "10.20.1.0/24"}
    assert result["hv-pool-b"] == {"type": "calico", "pods": "100.64.0.0/12"}
    assert result["eu-de-1-cp"] == result["st-pool-a"] == {"type": "calico", "pods": "100.64.0.0/12"}


# --- a re-run that lands on gardenlet's periodic reconcile ---------------------------------------

def live_shoot(op_type="Reconcile", state="Processing", generation=3, observed=3, condition="True"):
    return {"metadata": {"name": "hv-pool-a", "generation": generation},
            "status": {"observedGeneration": observed,
                       "conditions": [{"type": "APIServerAvailable", "status": "True"},
                                      {"type": "EveryNodeReady", "status": condition}],
                       "lastOperation": {"type": op_type, "state": state, "progress": 40}}}


@pytest.mark.parametrize("shoot, ready", [
    (live_shoot(), True),
    (live_shoot(state="Error"), True),                     # transient, retried; Failed only after 12 h
    (live_shoot(state="Failed"), False),
    (live_shoot(observed=2), False),                       # a spec change not yet picked up
    (live_shoot(condition="False"), False),                # not healthy: wait for the reconcile
    (live_shoot(op_type="Create"), False),                 # never finished once
    (live_shoot(state="Succeeded"), False),                # the normal rule decides (ready anyway)
])
def test_periodic_reconcile_of_an_unchanged_healthy_shoot(shoot, ready):
    assert gardener.periodic_reconcile(shoot) is ready


@pytest.mark.parametrize("fields, ago, expected", [
    ([{"manager": "upgrade", "time": "2026-12-05T10:00:00Z"}], 60, True),       # the write's own reconcile
    ([{"manager": "upgrade", "time": "2026-12-05T10:00:00Z"}], 3599, True),
    ([{"manager": "upgrade", "time": "2026-12-05T10:00:00Z"}], 3600, False),    # a periodic one may have come
    ([{"manager": "other", "time": "2026-12-05T10:00:00Z"}], 60, False),        # written by someone else
    ([{"manager": "upgrade", "time": "2026-12-05T08:00:00Z"},
      {"manager": "upgrade", "time": "2026-12-05T10:00:00Z"}], 60, True),       # the latest write counts
    ([{"manager": "upgrade"}], 60, False),                                     # no time: nothing known
    (None, 60, False),
])
def test_a_reconcile_soon_after_a_write_is_the_writes_own(fields, ago, expected):
    shoot = live_shoot()
    if fields is not None:
        shoot["metadata"]["managedFields"] = fields
    written = timestamps.parse_timestamp("2026-12-05T10:00:00Z")
    assert gardener.periodic_reconcile(shoot) is True
    assert gardener.periodic_reconcile(shoot, written_by="upgrade", now=written + ago) is not expected
