# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Keystone bootstrap of many OpenStack clusters as one batch (phases 5 and 7)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import catalog as kc
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import clusters as kb
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import composition

DEFAULTS = {"name": "lab", "namespace": "openstack", "region": "lab", "keystone_cr": True, "secret_auth": True,
            "services": ["keystone", "glance"], "public_url": "", "internal_url": "", "admin_url": ""}
TENANTS = [{"name": "tenant-a", "namespace": "openstack-tenant-a", "services": ["keystone", "glance", "placement"]},
           {"name": "tenant-b", "namespace": "openstack-tenant-b"}]
ENDPOINTS = {"openstack-tenant-a": "http://a.example:5000/v3", "openstack-tenant-b": "http://b.example:5000/v3"}


def korc_of(endpoints):
    return dict((name, {"auth_url": endpoints["openstack-" + name], "admin_auth_url": endpoints["openstack-" + name],
                        "application_credential_id": "id-" + name}) for name in ("tenant-a", "tenant-b"))


def problems_of(clusters, defaults=None, **extra):
    with pytest.raises(InputError) as error:
        kb.batch(clusters, defaults or DEFAULTS, **extra)
    return error.value.problems


def test_no_clusters_is_the_one_cluster_of_the_defaults():
    result = kb.batch([], DEFAULTS)
    assert [(c["name"], c["namespace"]) for c in result["clusters"]] == [("lab", "openstack")]
    assert result["keystones"] == [{"api_version": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
                                    "name": "keystone", "namespace": "openstack"}]
    # The Keystone is not known yet: no Keystone module has anything to do.
    assert result["check"] == [] and result["korc"] == [] and "verify" not in result


def test_each_step_holds_every_cluster_in_one_list():
    first = kb.batch(TENANTS, DEFAULTS)
    assert [n["metadata"]["name"] for n in first["namespaces"]] == ["openstack-tenant-a", "openstack-tenant-b"]
    # The Secrets each Keystone CR names, which the keystone-operator's SecretsReady waits for; no Keystone CR write.
    assert [(s["namespace"], s["name"]) for s in first["keystone_secrets"]] == [
        ("openstack-tenant-a", "keystone-admin-credentials"), ("openstack-tenant-a", "keystone-db-credentials"),
        ("openstack-tenant-b", "keystone-admin-credentials"), ("openstack-tenant-b", "keystone-db-credentials")]
    assert "keystone_bootstraps" not in first
    known = kb.batch(TENANTS, DEFAULTS, ENDPOINTS)
    # Each cluster's Keystone module entry: its own admin, password from its own namespace's Secret.
    # status.endpoint is the internal URL: the admin's identity calls use the internal interface.
    assert [(e["name"], e["secret_auth"]["auth_url"], e["secret_auth"]["secret_namespace"],
             e["secret_auth"]["interface"]) for e in known["korc"]] == [
        ("tenant-a", ENDPOINTS["openstack-tenant-a"], "openstack-tenant-a", "internal"),
        ("tenant-b", ENDPOINTS["openstack-tenant-b"], "openstack-tenant-b", "internal")]
    assert [e["params"]["namespace"] for e in known["korc"]] == ["openstack-tenant-a", "openstack-tenant-b"]
    assert [e["params"]["auth_url"] for e in known["korc"]] == list(ENDPOINTS.values())
    assert known["check"][0]["params"] == {"domain": "Default", "projects": ["admin"], "admin_user": "admin",
                                           "roles": ["admin", "member", "reader", "service"]}
    full = kb.batch(TENANTS, DEFAULTS, ENDPOINTS, korc_of(ENDPOINTS))
    # The catalog of every cluster in one apply; each manifest in its cluster's namespace.
    services = dict((m["metadata"]["namespace"], set()) for m in full["catalog"])
    for manifest in full["catalog"]:
        if manifest["kind"] == "Service":
            services[manifest["metadata"]["namespace"]].add(manifest["metadata"]["name"])
    assert services == {"openstack-tenant-a": {"glance", "placement"}, "openstack-tenant-b": {"glance"}}
    assert [e["name"] for e in full["verify"]] == ["tenant-a", "tenant-b"]
    # Keystone's public endpoint is the template's (as the ControlPlane names it), the internal one its own.
    assert [(e["params"]["services"][0]["public_url"], e["params"]["services"][0]["internal_url"])
            for e in full["verify"]] == [
        ("https://keystone.%s.svc.cluster.local:5000/v3" % namespace, endpoint) for namespace, endpoint in ENDPOINTS.items()]
    assert [len(e["params"]["assignments"]) for e in full["role_assignments"]] == [2, 1]
    assert full["import_refs"] == kc.refs_of(full["imports"])
    # The users are waited for apart from the services and endpoints: the role grants need only them.
    assert full["user_refs"] == kc.refs_of([m for m in full["catalog"] if m["kind"] == "User"]) != []
    assert sorted(r["kind"] for r in full["catalog_refs"] + full["user_refs"]) == sorted(m["kind"] for m in full["catalog"])
    assert set(r["labels"]["c5c3.io/openstack-cluster-name"] for r in full["catalog_refs"]) == {"tenant-a", "tenant-b"}
    # One cluster's plan is exactly catalog_plan's: the batch adds no second concept.
    alone = kb.batch([TENANTS[1]], DEFAULTS, ENDPOINTS, korc_of(ENDPOINTS))
    assert alone["imports"] == [m for m in full["imports"] if m["metadata"]["namespace"] == "openstack-tenant-b"]


def test_the_one_cluster_of_phase_5_is_the_plan_of_catalog_plan():
    endpoint = "http://keystone.openstack:5000/v3"
    full = kb.batch([], DEFAULTS, {"openstack": endpoint}, {"lab": {"auth_url": endpoint, "admin_auth_url": endpoint}})
    plan = kc.catalog_plan({"namespace": "openstack", "cluster": "lab", "region": "lab", "services": ["keystone", "glance"],
                            "keystone_internal_url": endpoint, "korc_auth_url": endpoint, "consumer_auth_url": endpoint})
    assert full["imports"] == plan["imports"] and full["catalog"] == plan["catalog"] + plan["users"]
    assert full["credential_secrets"] == plan["credential_secrets"]
    assert full["endpoint_regions"][0]["params"] == {"region": "lab", "endpoints": plan["endpoints"]}


def test_every_clusters_problems_are_reported_together_naming_it():
    problems = problems_of([
        {"namespace": "openstack-a", "services": ["keystone", "nosuch"]},
        {"namespace": "Not_A_Label"},
        {"namespace": "openstack-a", "colour": "blue"},
        {"name": "x"}])
    text = "\n".join(problems)
    assert "OpenStack cluster openstack-a: services.nosuch: is not in the catalog table" in text
    assert "OpenStack cluster Not_A_Label: namespace: 'Not_A_Label' must be a DNS-1123 label" in text
    assert "clusters[2]: unknown keys colour" in text
    assert "clusters[3]: must be a mapping with a namespace" in text
    assert "clusters: namespace openstack-a is listed more than once" in text


def test_a_given_admin_cloud_serves_one_cluster_only():
    for override in ({"keystone_cr": False}, {"secret_auth": False}):
        assert any("one cluster only" in p for p in problems_of(TENANTS, dict(DEFAULTS, **override)))
    # One cluster with the module's own cloud: no secret_auth in its entries; known without an endpoint.
    result = kb.batch([], dict(DEFAULTS, keystone_cr=False))
    assert [list(e) for e in result["korc"]] == [["name", "params"]] and result["check"] == []


def test_the_admin_url_and_the_public_url_win_over_the_endpoint():
    clusters = [dict(TENANTS[0], admin_url="http://admin.a:5000/v3", public_url="https://keystone.a.example/v3")]
    result = kb.batch(clusters, DEFAULTS, ENDPOINTS, korc_of(ENDPOINTS))
    assert result["korc"][0]["secret_auth"]["auth_url"] == "http://admin.a:5000/v3"
    identity = [m for m in result["catalog"] if m["kind"] == "Endpoint" and m["spec"]["resource"]["serviceRef"] == "keystone"]
    assert dict((m["spec"]["resource"]["interface"], m["spec"]["resource"]["url"]) for m in identity) == {
        "public": "https://keystone.a.example/v3", "internal": ENDPOINTS["openstack-tenant-a"]}


def test_openbao_path_per_cluster():
    defaults = dict(DEFAULTS, openbao=True)
    result = kb.batch(TENANTS, defaults, ENDPOINTS, korc_of(ENDPOINTS))
    assert [e["params"]["secret_name"] for e in result["korc"]] == ["k-orc-app-credential"] * 2
    assert [e["params"]["synced_secret"] for e in result["korc"]] == ["k-orc-clouds-yaml"] * 2
    assert [(m["kind"], m["metadata"]["namespace"]) for m in result["openbao"]] == [
        ("PushSecret", "openstack-tenant-a"), ("ExternalSecret", "openstack-tenant-a"),
        ("PushSecret", "openstack-tenant-b"), ("ExternalSecret", "openstack-tenant-b")]
    assert problems_of(TENANTS, dict(defaults, openbao_store_kind="Nope"))


CLAIM = {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster", "metadata": {"name": "t1", "namespace": "x"},
         "spec": {"region": "r", "size": "small", "hypervisorClusters": ["hv"], "storageClusters": ["st"]}}


def test_the_tenants_catalog_is_what_their_control_plane_runs():
    control_plane = {"kind": "ControlPlane", "metadata": {"namespace": "openstack-t1"}, "spec": {
        "openstack": {"keystone": {"replicas": 1}, "nova": {"enabled": True}, "glance": {"enabled": True},
                      "neutron": {"enabled": False}, "manila": {"enabled": True}},
        "cortex": {"enabled": True}}}
    assert kb.control_plane_services(control_plane) == ["keystone", "glance", "nova", "placement", "manila", "cortex"]
    tenants = [{"name": "t1", "namespace": "openstack-t1"}, {"name": "t2", "namespace": "openstack-t2"}]
    namespace = {"kind": "Namespace", "metadata": {"name": "openstack-t1"}}
    # t2's ControlPlane is on another control-plane cluster: not this host's.
    assert kb.tenant_clusters(tenants, [namespace, control_plane]) == [
        {"name": "t1", "namespace": "openstack-t1",
         "services": ["keystone", "glance", "nova", "placement", "manila", "cortex"]}]


def test_a_composed_tenant_gets_a_valid_catalog():
    manifest = composition.control_plane_manifest(
        "t1", composition.claim_spec_with_defaults(CLAIM["spec"]),
        composition.storage_placements("t1", composition.claim_spec_with_defaults(CLAIM["spec"])),
        {"c5c3.io/openstack-cluster-name": "t1"})
    services = kb.control_plane_services(manifest)
    assert services[:1] == ["keystone"] and "nova" in services and "placement" in services
    result = kb.batch([{"name": "t1", "namespace": "openstack-t1", "services": services}], DEFAULTS)
    assert result["clusters"][0]["services"] == services


def test_a_settled_cluster_gets_no_catalog_steps_and_the_steps_stay_lists():
    full = kb.batch(TENANTS, DEFAULTS, ENDPOINTS, korc_of(ENDPOINTS), settled=["tenant-a"])
    assert set(m["metadata"]["namespace"] for m in full["catalog"] + full["imports"] + full["application_credentials"]) \
        == {"openstack-tenant-b"}
    assert [e["name"] for e in full["verify"]] == ["tenant-b"]
    assert [e["name"] for e in full["state"]] == ["tenant-a", "tenant-b"]  # both still judged
    none = kb.batch(TENANTS, DEFAULTS, ENDPOINTS, korc_of(ENDPOINTS), settled=["tenant-a", "tenant-b"])
    for step in ("imports", "import_refs", "secrets", "catalog", "user_refs", "catalog_refs", "application_credentials",
                 "credential_secrets", "endpoint_regions", "role_assignments", "verify", "openbao"):
        assert none[step] == [], step


def test_the_state_carries_the_digest_of_each_clusters_plan():
    def digests(tenants, endpoints=None):
        return dict((e["name"], e["settings"]["plan_digest"]) for e in kb.batch(tenants, DEFAULTS, endpoints)["state"])
    first = digests(TENANTS, ENDPOINTS)
    assert first == digests(TENANTS, ENDPOINTS) and first["tenant-a"] != first["tenant-b"]
    # Another plan for the same cluster (a service more, another Keystone URL): another digest.
    more = [dict(TENANTS[0], services=["keystone", "glance", "placement", "nova"]), TENANTS[1]]
    assert digests(more, ENDPOINTS)["tenant-a"] != first["tenant-a"]
    assert digests(more, ENDPOINTS)["tenant-b"] == first["tenant-b"]
    assert digests(TENANTS, dict(ENDPOINTS, **{"openstack-tenant-b": "http://b2.example:5000/v3"}))["tenant-b"] \
        != first["tenant-b"]


def test_identity_urls_the_public_from_the_plan_the_internal_the_keystones_own():
    endpoint = "http://keystone-api.openstack.svc.cluster.local:5000/v3"
    planned = dict(DEFAULTS, public_url_template="https://{name}.{cluster}.example.com{path}")
    full = kb.batch([], planned, {"openstack": endpoint}, {"lab": {"auth_url": endpoint, "admin_auth_url": endpoint}})
    identity = [m["spec"]["resource"]["url"] for m in full["catalog"]
                if m["kind"] == "Endpoint" and m["spec"]["resource"]["serviceRef"] == "keystone"]
    assert identity == ["https://keystone.lab.example.com/v3", endpoint]  # public, internal
    # The ControlPlane of phase 4 names the same public URL, which the c5c3-operator projects into the bootstrap:
    # K-ORC adopts the bootstrap's endpoint instead of adding a second one.
    region = composition.region_control_plane({"name": "lab"}, public_url_template=planned["public_url_template"])
    assert region["spec"]["services"]["keystone"]["publicEndpoint"] == identity[0]
    # Given URLs win; an admin URL (e.g. an ingress) is reached at the public interface unless told otherwise.
    given = dict(planned, public_url="https://id.example.com/v3", admin_url="https://id.example.com/v3")
    full = kb.batch([], given, {"openstack": endpoint}, {"lab": {"auth_url": endpoint, "admin_auth_url": endpoint}})
    assert [m["spec"]["resource"]["url"] for m in full["catalog"] if m["kind"] == "Endpoint"
            and m["spec"]["resource"]["serviceRef"] == "keystone"][0] == "https://id.example.com/v3"
    assert full["korc"][0]["secret_auth"]["interface"] == "public"
    told = kb.batch([], dict(given, admin_interface="admin"), {"openstack": endpoint})
    assert told["korc"][0]["secret_auth"]["interface"] == "admin"
    # An existing Keystone without a CR keeps the URL its admin cloud reaches, for both interfaces.
    existing = kb.batch([], dict(planned, keystone_cr=False), None,
                        {"lab": {"auth_url": endpoint, "admin_auth_url": endpoint}})
    assert [m["spec"]["resource"]["url"] for m in existing["catalog"]
            if m["kind"] == "Endpoint" and m["spec"]["resource"]["serviceRef"] == "keystone"] == [endpoint, endpoint]


def test_the_secrets_keystone_waits_for_are_generated_once_with_upstreams_keys():
    """SecretsReady: the database Secret with username and password, the admin Secret with password. Passwords are
    generated only when absent (generated_secret), so a re-run never rotates them; the username is a setting."""
    admin, db = kb.batch([], dict(DEFAULTS, db_user="ks", db_password_length=40))["keystone_secrets"]
    assert admin == {"name": "keystone-admin-credentials", "namespace": "openstack",
                     "generate": [{"key": "password", "length": 32}], "labels": {"c5c3.io/openstack-cluster-name": "lab"}}
    assert db == {"name": "keystone-db-credentials", "namespace": "openstack",
                  "generate": [{"key": "password", "length": 40}], "values": {"username": "ks"},
                  "labels": {"c5c3.io/openstack-cluster-name": "lab"}}
    named = kb.batch([], dict(DEFAULTS, db_secret="keystone-db"))["keystone_secrets"]
    assert named[1]["name"] == "keystone-db" and named[1]["values"] == {"username": "keystone"}
    # Checked with every other setting, before anything is written.
    assert "db_secret: 'Not_A_Name' is not a valid Secret name" in problems_of([], dict(DEFAULTS, db_secret="Not_A_Name"))
