# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batch form of the Keystone modules (option clusters): many Keystones in one module run."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneModule
from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    keystone_bootstrap_check, keystone_endpoint_regions, keystone_role_assignments, keystone_verify,
    korc_credentials)

from module_harness import KeystoneServer, assert_hidden, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

PASSWORDS = {"tenant-a": "tenant-a-admin-Passw0rd-1", "tenant-b": "tenant-b-admin-Passw0rd-2"}


@pytest.fixture
def keystones(monkeypatch, kube):  # noqa: F811
    """Two bootstrapped Keystones, each with its admin password in its own namespace's Secret."""
    for name in list(__import__("os").environ):
        if name.startswith("OS_"):
            monkeypatch.delenv(name)
    servers = {}
    for name, password in PASSWORDS.items():
        servers[name] = KeystoneServer().bootstrap(password=password)
        metadata = {"name": "keystone-admin-credentials", "namespace": "openstack-" + name}
        kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": metadata,
                  "data": {"password": base64.b64encode(password.encode()).decode()}})
    yield servers
    for server in servers.values():
        server.stop()


def entry(servers, name, **params):
    return {"name": name, "params": params, "secret_auth": {
        "auth_url": servers[name].url, "secret_namespace": "openstack-" + name,
        "secret_name": "keystone-admin-credentials"}}


def batch(servers, *entries, **extra):
    result = {"kubeconfig": "/k.yaml", "connect_retries": 2, "connect_retry_delay": 0.01,
              "clusters": list(entries)}
    result.update(extra)
    return result


def test_bootstrap_check_talks_to_each_clusters_keystone(keystones):
    result, text = run_module(keystone_bootstrap_check.main, batch(
        keystones, entry(keystones, "tenant-a"), entry(keystones, "tenant-b", projects=["admin", "service"])))
    assert not result.get("failed") and not result["changed"], result
    a, b = result["clusters"]
    assert (a["name"], b["name"]) == ("tenant-a", "tenant-b")
    assert a["project_ids"] == {"admin": keystones["tenant-a"].state.named("projects", "admin")["id"]}
    assert sorted(b["project_ids"]) == ["admin", "service"]
    assert b["project_ids"]["admin"] == keystones["tenant-b"].state.named("projects", "admin")["id"]
    for server in keystones.values():  # one token per Keystone, with that Keystone's own admin
        assert [r for r in server.state.requests if r[1] == "/v3/auth/tokens"]
    assert_hidden(text, *PASSWORDS.values())


def test_a_failing_cluster_is_named_and_the_others_still_run(keystones, kube):  # noqa: F811
    # tenant-b's Secret holds another password than its Keystone's: refused; tenant-a is checked all the same.
    kube.objects[("v1", "Secret", "openstack-tenant-b", "keystone-admin-credentials")]["data"]["password"] = \
        base64.b64encode(b"wrong-password-9").decode()
    result, text = run_module(keystone_bootstrap_check.main, batch(
        keystones, entry(keystones, "tenant-a"), entry(keystones, "tenant-b")))
    assert result["failed"]
    assert result["msg"].startswith("1 of 2 OpenStack cluster(s) failed:\n- OpenStack cluster tenant-b: Keystone at %s"
                                    % keystones["tenant-b"].url), result["msg"]
    assert "refused the credentials (HTTP 401)" in result["msg"]
    a, b = result["clusters"]
    assert not a.get("failed") and a["domain_id"] == "default"
    assert b["failed"] and "refused the credentials" in b["msg"]
    assert_hidden(text, "wrong-password-9", *PASSWORDS.values())


def test_every_entry_is_validated_before_any_cluster_is_touched(keystones):
    result, _text = run_module(keystone_endpoint_regions.main, batch(
        keystones, entry(keystones, "tenant-a", region="RegionOne", endpoints=[{"service": "glance"}]),
        entry(keystones, "tenant-b", endpoints=[], colour="blue"), entry(keystones, "tenant-b", region="RegionOne")))
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed"), result
    problems = "\n".join(result["problems"])
    assert "clusters: tenant-b is listed more than once" in problems
    assert "clusters[tenant-a].params:" in problems and "interface" in problems
    assert "clusters[tenant-b].params:" in problems and "colour" in problems
    assert "region is required (at the top or in clusters[tenant-b].params)" in problems
    for server in keystones.values():
        assert server.state.requests == []


def test_top_level_options_are_every_clusters_defaults(keystones):
    # region at the top, endpoints per cluster; tenant-b's region overrides the top-level one.
    for name, server in keystones.items():
        service = server.state.add("services", name="glance", type="image", enabled=True)
        server.state.add("endpoints", service_id=service["id"], interface="public", url="http://glance-" + name,
                         region_id=None, enabled=True)
    keystones["tenant-b"].state.add("regions", id="RegionTwo")
    args = batch(keystones, *[entry(keystones, name, endpoints=[
        {"service": "glance", "type": "image", "interface": "public", "url": "http://glance-" + name}])
        for name in keystones], region="RegionOne")
    args["clusters"][1]["params"]["region"] = "RegionTwo"
    result, _text = run_module(keystone_endpoint_regions.main, args)
    assert result["changed"] and [len(c["moved"]) for c in result["clusters"]] == [1, 1], result
    regions = dict((name, [e["region_id"] for e in server.state.endpoints]) for name, server in keystones.items())
    assert regions == {"tenant-a": ["RegionOne"], "tenant-b": ["RegionTwo"]}
    result, _text = run_module(keystone_endpoint_regions.main, args)
    assert not result["changed"] and [c["moved"] for c in result["clusters"]] == [[], []], result


def test_role_assignments_in_batch(keystones):
    for server in keystones.values():
        server.state.add("users", name="glance", domain_id="default", enabled=True, password="glance-pw-1")
    args = batch(keystones, *[entry(keystones, name) for name in keystones],
                 assignments=[{"user": "glance", "project": "service", "roles": ["service"]}])
    result, _text = run_module(keystone_role_assignments.main, args, check_mode=True)
    assert result["changed"] and [c["assignments"][0]["granted"] for c in result["clusters"]] == [["service"]] * 2
    result, _text = run_module(keystone_role_assignments.main, args)
    assert result["changed"]
    result, _text = run_module(keystone_role_assignments.main, args)
    assert not result["changed"], result


def test_korc_credentials_write_each_clusters_secret_from_its_own_keystone(keystones, kube):  # noqa: F811
    args = batch(keystones, *[entry(keystones, name, namespace="openstack-" + name) for name in keystones],
                 region="RegionOne")
    result, text = run_module(korc_credentials.main, args)
    assert result["changed"] and [c["minted"] for c in result["clusters"]] == [True, True], result
    for cluster, (name, server) in zip(result["clusters"], keystones.items()):
        (credential,) = server.state.credentials
        assert cluster["application_credential_id"] == credential["id"]
        assert cluster["auth_url"] == server.url
        secret = kube.find("v1", "Secret", "k-orc-clouds-yaml", "openstack-" + name)
        cloud = yaml.safe_load(base64.b64decode(secret["data"]["clouds.yaml"]).decode())["clouds"]["openstack"]
        assert cloud["auth"]["application_credential_id"] == credential["id"] and cloud["auth"]["auth_url"] == server.url
        assert_hidden(text, credential["secret"])
    result, _text = run_module(korc_credentials.main, args)
    assert not result["changed"] and [c["reason"] for c in result["clusters"]] == ["valid", "valid"], result
    # K-ORC's credentials of one cluster are unknown to the other's Keystone: verify each against its own.
    services = [{"name": "keystone", "type": "identity", "public_url": "http://k/v3", "internal_url": "http://k/v3"}]
    verify = batch(keystones, *[entry(keystones, name, namespace="openstack-" + name) for name in keystones],
                   region="RegionOne", services=services)
    result, _text = run_module(keystone_verify.main, verify)
    assert result["failed"] and len(result["clusters"]) == 2
    for cluster in result["clusters"]:
        assert cluster["checked"]["credentials"] == 1
        assert [p for p in cluster["problems"] if "K-ORC" in p] == [], cluster["problems"]
        assert cluster["problems"] == ["the catalog has no service keystone of type identity"]


def test_single_cluster_form_still_needs_its_required_options(keystones):
    result, _text = run_module(korc_credentials.main, {"kubeconfig": "/k.yaml", "secret_auth": entry(
        keystones, "tenant-a")["secret_auth"]})
    assert result["failed"] and result["problems"] == ["namespace is required"], result


def test_a_no_log_option_given_per_cluster_is_masked_before_validation():
    class WithToken(KeystoneModule):
        argument_spec = dict(token=dict(type="str", no_log=True), region=dict(type="str"))
    raw = {"clusters": [{"name": "a", "params": {"token": "tok-1", "region": "r"}}, {"name": "b", "params": "x"}]}
    assert WithToken.argument_secrets(raw) == {"tok-1"}
    assert korc_credentials.KorcCredentialsModule.argument_secrets(raw) == set()
