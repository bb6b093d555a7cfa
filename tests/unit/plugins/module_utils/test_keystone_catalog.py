# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalog of one OpenStack cluster as K-ORC manifests (seed 003, K-ORC v2.6.0)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest
import yaml

from conftest import lab_upstream_crds
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import templating
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import catalog as kc
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import failures
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import settings as catalog_settings
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import services as region_services
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import validate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate

KEYSTONE = "https://keystone.openstack.svc.cluster.local:5000/v3"
SETTINGS = {"namespace": "openstack", "region": "RegionOne", "keystone_public_url": KEYSTONE}


def plan(**overrides):
    settings = dict(SETTINGS)
    settings.update(overrides)
    return kc.catalog_plan(settings)


def by_kind(manifests, kind):
    return dict((m["metadata"]["name"], m) for m in manifests if m["kind"] == kind)


def problems_of(**settings):
    with pytest.raises(InputError) as error:
        kc.catalog_plan(settings)
    return error.value.problems


# --- the service table --------------------------------------------------------

@pytest.mark.parametrize("name, stype, port, path", [
    ("keystone", "identity", 5000, "/v3"),
    ("glance", "image", 9292, ""),
    ("placement", "placement", 8778, ""),
    ("nova", "compute", 8774, "/v2.1"),
    ("neutron", "network", 9696, ""),
    ("cinder", "volumev3", 8776, "/v3/%(project_id)s"),
    ("octavia", "load-balancer", 9876, ""),
    ("manila", "sharev2", 8786, "/v2"),
    ("cortex", "scheduler", 8080, ""),
])
def test_service_table(name, stype, port, path):
    assert (region_services.SERVICES[name]["type"], region_services.SERVICES[name]["port"], region_services.SERVICES[name]["path"]) == (stype, port, path)


def test_default_services_are_the_seed_control_plane_ones():
    assert [s["name"] for s in plan()["services"]] == ["keystone", "glance", "placement", "nova", "neutron", "cinder"]


def test_urls_follow_seed_003():
    services = dict((s["name"], s) for s in plan(services=list(region_services.SERVICES))["services"])
    assert services["glance"]["internal_url"] == "https://glance.openstack.svc.cluster.local:9292"
    assert services["placement"]["public_url"] == "https://placement.openstack.svc.cluster.local:8778"
    assert services["nova"]["internal_url"] == "https://nova.openstack.svc.cluster.local:8774/v2.1"
    assert services["cortex"]["internal_url"] == "https://cortex.openstack.svc.cluster.local:8080"
    assert services["cinder"]["public_url"] == "https://cinder.openstack.svc.cluster.local:8776/v3/%(project_id)s"
    # Keystone's own URLs are given, not derived.
    assert services["keystone"]["public_url"] == services["keystone"]["internal_url"] == KEYSTONE


def test_tenant_namespace_and_templates_and_overrides():
    result = plan(namespace="openstack-customer-a", keystone_internal_url="http://keystone.internal:5000/v3",
                  public_url_template="https://{name}.{region}.example.com{path}",
                  services=["keystone", {"name": "nova", "internal_url": "http://nova.internal:8774/v2.1"},
                            {"name": "glance", "enabled": False}, {"name": "myservice", "type": "thing", "port": 1234}])
    services = dict((s["name"], s) for s in result["services"])
    assert sorted(services) == ["keystone", "myservice", "nova"]
    assert services["keystone"]["internal_url"] == "http://keystone.internal:5000/v3"
    assert services["nova"]["public_url"] == "https://nova.RegionOne.example.com/v2.1"
    assert services["nova"]["internal_url"] == "http://nova.internal:8774/v2.1"
    assert services["myservice"]["internal_url"] == "https://myservice.openstack-customer-a.svc.cluster.local:1234"
    assert result["namespace"] == "openstack-customer-a"


def test_services_as_a_mapping():
    result = plan(services={"keystone": True, "glance": {"roles": ["service"]}, "nova": False})
    services = dict((s["name"], s) for s in result["services"])
    assert sorted(services) == ["glance", "keystone"]
    assert services["glance"]["roles"] == ["service"]


def test_every_problem_is_reported_together():
    problems = problems_of(namespace="Bad_NS", keystone_public_url="ftp://x", public_url_template="{nope}",
                           services=["glance", "unknown", "glance"], service_roles=["admin", "operator"],
                           service_project_policy="maybe", korc_interface="private")
    assert problems == [
        "namespace: 'Bad_NS' must be a DNS-1123 label (the OpenStack cluster's namespace)",
        "region: is required (the Keystone region of the catalog's endpoints)",
        # The internal URL defaults to the public one: its problem is reported once.
        "keystone_public_url: 'ftp://x' is not an http or https URL",
        "public_url_template: '{nope}' uses unknown placeholders nope (known: %s)" % ", ".join(catalog_settings.URL_FIELDS),
        "service_project_policy: must be one of managed, unmanaged, got 'maybe'",
        "korc_interface: must be one of public, internal, admin, got 'private'",
        "services.glance.roles: operator are not among the imported roles admin, member, reader, service",
        "services.unknown: is not in the catalog table (%s); give its type and port"
        % ", ".join(sorted(region_services.SERVICES)),
        "services.glance: is listed twice",
    ]


def test_settings_must_be_a_mapping():
    with pytest.raises(InputError, match="^settings: must be a mapping, got list$"):
        kc.catalog_plan(["openstack"])


# --- the manifests ------------------------------------------------------------

def test_imports_are_unmanaged_filters_on_what_the_bootstrap_created():
    imports = plan()["imports"]
    domain = by_kind(imports, "Domain")["default"]
    assert domain["spec"] == {"cloudCredentialsRef": {"secretName": "k-orc-clouds-yaml", "cloudName": "openstack"},
                              "managementPolicy": "unmanaged", "import": {"filter": {"name": "Default"}}}
    projects = by_kind(imports, "Project")
    assert projects["admin"]["spec"]["import"] == {"filter": {"name": "admin", "domainRef": "default"}}
    roles = by_kind(imports, "Role")
    assert sorted(roles) == ["admin", "member", "reader", "service"]
    assert roles["reader"]["spec"]["import"] == {"filter": {"name": "reader"}}
    assert by_kind(imports, "Service")["keystone"]["spec"]["import"] == {
        "filter": {"name": "keystone", "type": "identity"}}


def test_service_project_is_adopted_or_created_and_never_deleted_by_default():
    project = by_kind(plan()["imports"], "Project")["service"]
    assert project["spec"]["managementPolicy"] == "managed"
    assert project["spec"]["managedOptions"] == {"onDelete": "detach"}
    assert project["spec"]["resource"] == {"name": "service", "domainRef": "default"}
    imported = by_kind(plan(service_project_policy="unmanaged")["imports"], "Project")["service"]
    assert imported["spec"]["import"] == {"filter": {"name": "service", "domainRef": "default"}}


def test_catalog_has_a_managed_service_and_two_endpoints_per_service():
    catalog = plan()["catalog"]
    services = by_kind(catalog, "Service")
    assert "keystone" not in services  # the bootstrap's, imported
    assert services["glance"]["spec"]["resource"] == {"name": "glance", "type": "image", "enabled": True,
                                                      "description": "OpenStack Image (Glance)"}
    endpoints = by_kind(catalog, "Endpoint")
    assert len(endpoints) == 12
    assert endpoints["nova-internal"]["spec"]["resource"] == {
        "serviceRef": "nova", "interface": "internal", "url": "https://nova.openstack.svc.cluster.local:8774/v2.1",
        "enabled": True}
    # K-ORC adopts the bootstrap's identity endpoints and must leave them in Keystone.
    assert endpoints["keystone-public"]["spec"]["managedOptions"] == {"onDelete": "detach"}
    assert "managedOptions" not in endpoints["glance-public"]["spec"]


def test_service_users_and_application_credentials():
    result = plan()
    users = by_kind(result["users"], "User")
    assert sorted(users) == ["cinder", "glance", "neutron", "nova", "placement"]
    assert users["glance"]["spec"]["resource"]["passwordRef"] == "glance-keystone-user"
    assert users["glance"]["spec"]["resource"]["defaultProjectRef"] == "service"
    credentials = by_kind(result["application_credentials"], "ApplicationCredential")
    glance = credentials["glance"]["spec"]
    assert glance["resource"]["secretRef"] == "glance-keystone-credentials"
    assert glance["resource"]["userRef"] == "glance"
    assert glance["resource"]["roleRefs"] == ["admin", "service"]
    assert glance["resource"]["unrestricted"] is False
    # Keystone lets only the owner create an application credential.
    assert glance["cloudCredentialsRef"] == {"secretName": "glance-keystone-user", "cloudName": "glance"}
    assert result["role_assignments"][0] == {"user": "glance", "user_domain": "Default", "project": "service",
                                             "project_domain": "Default", "roles": ["admin", "service"]}


def test_a_service_password_version_gives_every_service_user_secrets_of_its_own_and_retires_the_older_ones():
    assert plan()["retired_secrets"] == []
    result = plan(service_password_version=2)
    users = by_kind(result["users"], "User")
    assert users["nova"]["spec"]["resource"]["passwordRef"] == "nova-keystone-user-v2"
    credentials = by_kind(result["application_credentials"], "ApplicationCredential")
    assert credentials["nova"]["spec"]["cloudCredentialsRef"] == {"secretName": "nova-keystone-user-v2",
                                                                  "cloudName": "nova"}
    assert "nova-keystone-user-v2" in [spec["name"] for spec in result["secrets"]]
    retired = [(m["kind"], m["metadata"]["name"]) for m in result["retired_secrets"]]
    assert ("Secret", "nova-keystone-user") in retired and ("Secret", "nova-keystone-user-v1") in retired
    assert len(retired) == 2 * len(users)
    assert plan(service_password_version="1")["settings"]["service_password_version"] == 1
    for bad in (-1, "x", True, 1.5):
        assert "service_password_version: must be a whole number of at least 0" in " ".join(
            problems_of(service_password_version=bad))


def test_a_service_credential_version_gives_every_service_a_new_credential_that_its_secret_switches_to():
    base = plan()
    assert base["retired_credentials"] == []
    (nova_v0,) = [m for m in base["application_credentials"] if m["metadata"]["name"] == "nova"]
    assert nova_v0["spec"]["resource"]["secretRef"] == "nova-keystone-credentials"
    result = plan(service_credential_version=2)
    credentials = by_kind(result["application_credentials"], "ApplicationCredential")
    nova = credentials["nova-v2"]["spec"]["resource"]
    # Immutable in K-ORC: a new object, a new Keystone name and the version's own secret.
    assert nova["name"] == "nova-v2" and nova["secretRef"] == "nova-keystone-credentials-v2"
    assert nova["userRef"] == "nova"
    assert "nova-keystone-credentials-v2" in [spec["name"] for spec in result["secrets"]]
    assert "nova-keystone-credentials" not in [spec["name"] for spec in result["secrets"]]
    # The service CR's Secret gets the version's ID and secret in one write.
    (consumer,) = [spec for spec in result["credential_secrets"] if spec["name"] == "nova-keystone-credentials"]
    assert consumer["generate"] == []
    assert [(v["key"], v["kind"], v["name"], v["field"]) for v in consumer["values_from"]] == [
        ("application_credential_id", "ApplicationCredential", "nova-v2", "status.id"),
        ("value", "Secret", "nova-keystone-credentials-v2", "data.value")]
    users = sorted(c["spec"]["resource"]["userRef"] for c in credentials.values())
    assert {s["credentials_secret"] for s in result["services"] if s["user"]} == {
        "%s-keystone-credentials" % user for user in users}
    # The ApplicationCredentials of versions 0 and 1 go first, then the Secrets of versions 1 .. N-1 (version 0's is
    # the one the service CR names).
    retired = [(m["kind"], m["metadata"]["name"]) for m in result["retired_credentials"]]
    assert sorted(retired[:2 * len(users)]) == sorted(
        [("ApplicationCredential", user) for user in users] + [("ApplicationCredential", user + "-v1") for user in users])
    assert sorted(retired[2 * len(users):]) == [("Secret", user + "-keystone-credentials-v1") for user in users]
    for bad in (-1, "x", True):
        assert "service_credential_version: must be a whole number of at least 0" in " ".join(
            problems_of(service_credential_version=bad))


def test_every_other_object_uses_k_orc_credentials_and_carries_the_cluster_labels():
    result = plan(cluster="region", korc_secret="k-orc-x", korc_cloud="c")
    for manifest in result["imports"] + result["catalog"] + result["users"]:
        assert manifest["spec"]["cloudCredentialsRef"] == {"secretName": "k-orc-x", "cloudName": "c"}
        assert manifest["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "c5c3.cobaltcore",
                                                  "c5c3.io/openstack-cluster-name": "region"}
        assert manifest["metadata"]["namespace"] == "openstack"


def test_endpoint_list_for_regions_and_verification():
    result = plan(services=["keystone", "glance"])
    assert result["endpoints"] == [
        {"service": "keystone", "type": "identity", "interface": "public", "url": KEYSTONE},
        {"service": "keystone", "type": "identity", "interface": "internal", "url": KEYSTONE},
        {"service": "glance", "type": "image", "interface": "public",
         "url": "https://glance.openstack.svc.cluster.local:9292"},
        {"service": "glance", "type": "image", "interface": "internal",
         "url": "https://glance.openstack.svc.cluster.local:9292"}]
    domain = {"api_version": naming.KORC_API_VERSION, "kind": "Domain", "name": "default", "namespace": "openstack",
              "labels": result["imports"][0]["metadata"]["labels"]}
    assert kc.refs_of(result["imports"][:1]) == [domain]


def test_secret_specs_generate_and_render_but_hold_no_value():
    result = plan(services=["glance"], korc_auth_url="http://keystone.internal/v3")
    user, credentials = result["secrets"]
    assert user["name"] == "glance-keystone-user" and user["generate"] == [{"key": "password", "length": 32}]
    cloud = user["templates"]["clouds.yaml"]["clouds"]["glance"]
    assert cloud["auth"]["password"] == "${password}"
    assert cloud["auth"]["auth_url"] == "http://keystone.internal/v3"
    assert cloud["auth"]["project_name"] == "service"
    assert credentials["generate"] == [{"key": "value", "length": 48}]
    complete = result["credential_secrets"][0]
    assert complete["values_from"] == [{"key": "application_credential_id", "api_version": naming.KORC_API_VERSION,
                                        "kind": "ApplicationCredential", "name": "glance", "field": "status.id"}]
    auth = complete["templates"]["clouds.yaml"]["clouds"]["glance"]
    assert auth["auth_type"] == "v3applicationcredential"
    assert auth["auth"]["application_credential_secret"] == "${value}"
    assert complete["values"] == {"auth_url": KEYSTONE, "region_name": "RegionOne"}


def _korc_crds():
    """{kind: schema} of the K-ORC CRDs the lab installs (lab/crds/upstream.json)."""
    unused, paths = lab_upstream_crds("k-orc")
    crds = {}
    for path in paths:
        with open(path) as handle:
            crd = yaml.safe_load(handle)
        crds[crd["spec"]["names"]["kind"]] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return crds


def test_manifests_match_the_k_orc_v2_6_0_crds():
    crds = _korc_crds()
    result = plan(services=list(region_services.SERVICES))
    manifests = result["imports"] + result["catalog"] + result["users"] + result["application_credentials"]
    for manifest in manifests:
        schema = crds[manifest["kind"]]["properties"]["spec"]
        assert validate(schema, manifest["spec"], "spec") == [], manifest["metadata"]["name"]


# --- imports that find nothing --------------------------------------------------

def _not_found(kind="Role", name="nope", query=None):
    return {"apiVersion": naming.KORC_API_VERSION, "kind": kind,
            "metadata": {"name": name, "namespace": "openstack", "generation": 1},
            "spec": {"managementPolicy": "unmanaged", "import": {"filter": query or {"name": "nope"}}},
            "status": {"conditions": [
                {"type": "Available", "status": "False", "reason": "Progressing", "observedGeneration": 1,
                 "message": failures.KORC_IMPORT_NOT_FOUND},
                {"type": "Progressing", "status": "True", "reason": "Progressing", "observedGeneration": 1,
                 "message": failures.KORC_IMPORT_NOT_FOUND}]}}


def test_readiness_names_the_filter_of_an_import_that_matches_nothing():
    state = evaluate(_not_found())
    assert not state.ready and not state.terminal  # K-ORC keeps looking
    assert any('import filter {"name": "nope"} matches nothing' in line and failures.KORC_IMPORT_NOT_FOUND in line
               for line in state.missing), state.missing


def test_the_role_stops_at_the_first_not_found_report():
    state = evaluate(_not_found(), failed_expression=failures.IMPORT_NOT_FOUND_EXPRESSION)
    assert state.terminal


def test_import_failure_message_lists_filter_and_k_orc_condition():
    manifests = plan(roles=["admin", "service", "nope"])["imports"]
    state = evaluate(_not_found(), failed_expression=failures.IMPORT_NOT_FOUND_EXPRESSION)
    result = {"msg": "1 object(s) failed", "objects": [
        dict(apiVersion=naming.KORC_API_VERSION, kind="Role", name="nope", namespace="openstack", found=True,
             **state.as_dict()),
        dict(apiVersion=naming.KORC_API_VERSION, kind="Role", name="admin", namespace="openstack", found=True,
             ready=True, terminal=False, missing=[]),
        dict(apiVersion=naming.KORC_API_VERSION, kind="Domain", name="default", namespace="openstack", found=False,
             ready=False, terminal=False, missing=["not found"])]}
    message = failures.import_failure_message(result, manifests)
    assert message.startswith("K-ORC could not import")
    assert "- Role openstack/nope: import filter {\"name\": \"nope\"} matches nothing in OpenStack" in message
    assert failures.KORC_IMPORT_NOT_FOUND in message
    assert "failed_expression" not in message
    assert "Role openstack/admin" not in message
    assert "- Domain openstack/default: the object does not exist" in message


def test_import_failure_message_adds_the_filter_to_other_failures():
    manifests = plan()["imports"]
    result = {"objects": [dict(apiVersion=naming.KORC_API_VERSION, kind="Project", name="admin", namespace="openstack",
                               found=True, ready=False, terminal=True,
                               missing=["condition Progressing is False (reason InvalidConfiguration: found more "
                                        "than one matching OpenStack resource during import)"])]}
    message = failures.import_failure_message(result, manifests)
    assert 'import filter {"domainRef": "default", "name": "admin"}' in message
    assert failures.import_failure_message({"msg": "boom"}, manifests) == "K-ORC import failed: boom"


# --- templates ----------------------------------------------------------------

def test_render_template_mapping_becomes_yaml_with_values_inserted_verbatim():
    text = templating.render_template({"clouds": {"x": {"auth": {"password": "${password}", "port": 5}}}},
                                      {"password": "a: b #c"})
    assert yaml.safe_load(text) == {"clouds": {"x": {"auth": {"password": "a: b #c", "port": 5}}}}
    assert templating.render_template("id=${id}", {"id": "42"}) == "id=42"


def test_render_template_errors():
    with pytest.raises(InputError, match="^template.a: refers to 'missing', which the Secret does not hold$"):
        templating.render_template({"a": "${missing}"}, {})
    with pytest.raises(InputError, match="^clouds.yaml: must be a string or a mapping, got int$"):
        templating.render_template(5, {}, "clouds.yaml")
    with pytest.raises(InputError, match="^template: is not a valid template"):
        templating.render_template("${", {})


def test_plan_is_json_serializable():
    json.dumps(plan(services=list(region_services.SERVICES)))
