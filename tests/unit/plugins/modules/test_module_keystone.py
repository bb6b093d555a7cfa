# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""run() of the Keystone modules against a Keystone over HTTP: arguments, check mode, failure messages."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import yaml
from openstack.config import loader as config_loader

from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    keystone_bootstrap_check, keystone_endpoint_regions, keystone_role_assignments, keystone_token_check,
    keystone_verify, korc_credentials)

from module_harness import SECRET, assert_hidden, run_module
from module_harness import keystone, kube  # noqa: F401  # pylint: disable=unused-import


def args(server, **extra):
    result = {"auth": server.auth(), "connect_retries": 2, "connect_retry_delay": 0.01}
    result.update(extra)
    return result


# -- keystone_bootstrap_check ------------------------------------------------------

def test_bootstrap_check_returns_the_ids(keystone):
    keystone.bootstrap()
    result, _text = run_module(keystone_bootstrap_check.main, args(keystone), check_mode=True)
    state = keystone.state
    assert not result.get("failed") and not result["changed"], result
    assert result["domain_id"] == "default"
    assert result["project_ids"] == {"admin": state.named("projects", "admin")["id"]}
    assert result["role_ids"]["admin"] == state.named("roles", "admin")["id"]


def test_bootstrap_check_checks_the_named_admin_user_not_the_one_it_authenticates_as(keystone):
    keystone.bootstrap()
    state = keystone.state
    state.add("users", name="operator", domain_id="default", enabled=True, password="operator-pw-1")
    state.grant("operator", "admin", "admin")
    # The bootstrap admin lost the admin role; the operator running the check holds it.
    state.assignments.remove((state.named("users", "admin")["id"], state.named("projects", "admin")["id"],
                              state.named("roles", "admin")["id"]))
    auth = keystone.auth(user="operator", password="operator-pw-1")
    result, _text = run_module(keystone_bootstrap_check.main, dict(args(keystone), auth=auth))
    assert result["failed"] and result["problems"] == ["user admin holds no admin role on project admin"], result
    result, _text = run_module(keystone_bootstrap_check.main, dict(args(keystone), auth=auth, admin_user="operator"))
    assert not result.get("failed"), result
    result, _text = run_module(keystone_bootstrap_check.main, dict(args(keystone), auth=auth, admin_user="nobody"))
    assert result["failed"] and result["problems"] == ["user nobody does not exist in domain Default"]


def test_bootstrap_check_lists_everything_missing(keystone):
    keystone.bootstrap()
    result, _text = run_module(keystone_bootstrap_check.main, args(keystone, projects=["admin", "service", "extra"],
                                                                   roles=["admin", "auditor"]))
    assert result["failed"] and result["problems"] == ["project extra does not exist in domain Default",
                                                       "role auditor does not exist"]
    assert result["msg"].startswith("Keystone at %s: the bootstrap did not create what K-ORC imports (2 problem(s))"
                                    % keystone.url), result["msg"]
    result, _text = run_module(keystone_bootstrap_check.main, args(keystone, domain="Elsewhere"))
    assert result["failed"] and result["problems"] == ["domain Elsewhere does not exist"]


def test_keystone_refusing_the_credentials_fails_at_once(keystone):
    keystone.bootstrap()
    result, text = run_module(keystone_bootstrap_check.main, dict(args(keystone),
                                                                  auth=keystone.auth(password="wrong-password-1")))
    assert result["failed"] and "refused the credentials (HTTP 401)" in result["msg"], result["msg"]
    assert [r for r in keystone.state.requests if r[1] == "/v3/auth/tokens"].__len__() == 1
    assert_hidden(text, "wrong-password-1")


# -- keystone_token_check ----------------------------------------------------------

def clouds_yaml(tmp_path, monkeypatch, server, password=SECRET):
    """A clouds.yaml with the cloud lab-admin, found through OS_CLIENT_CONFIG_FILE as the preflight finds it."""
    path = tmp_path / "clouds.yaml"
    auth = dict(server.auth(password=password))
    path.write_text(yaml.safe_dump({"clouds": {"lab-admin": {"auth": auth, "identity_api_version": 3}}}))
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    # openstacksdk inserts the file into its module-level list of files: a copy keeps it out of later tests.
    monkeypatch.setattr(config_loader, "CONFIG_FILES", list(config_loader.CONFIG_FILES))


def test_token_check_reports_whom_the_token_is_for_and_never_the_token(keystone, tmp_path, monkeypatch):
    keystone.bootstrap()
    clouds_yaml(tmp_path, monkeypatch, keystone)
    for check_mode in (True, False):
        result, text = run_module(keystone_token_check.main, {"cloud": "lab-admin", "connect_retries": 2},
                                  check_mode=check_mode)
        state = keystone.state
        assert not result.get("failed") and not result["changed"], result
        assert result["auth_url"] == keystone.url
        assert result["user_id"] == state.named("users", "admin")["id"]
        assert result["project_id"] == state.named("projects", "admin")["id"]
        assert result["expires_at"] == "2999-01-01T00:00:00Z"
        assert keystone.httpd.tokens
        assert_hidden(text, SECRET, *keystone.httpd.tokens)


def test_token_check_refused_names_the_cloud_and_asks_once(keystone, tmp_path, monkeypatch):
    keystone.bootstrap()
    clouds_yaml(tmp_path, monkeypatch, keystone, password="wrong-password-1")
    result, text = run_module(keystone_token_check.main, {"cloud": "lab-admin", "connect_retries": 2})
    assert result["failed"] and result["msg"].startswith(
        "Keystone at %s (cloud lab-admin) refused the credentials (HTTP 401)" % keystone.url), result["msg"]
    assert len([r for r in keystone.state.requests if r[1] == "/v3/auth/tokens"]) == 1
    assert "user_id" not in result
    assert_hidden(text, "wrong-password-1")


def test_token_check_retries_an_unreachable_keystone_then_names_it(keystone):
    url = keystone.url
    keystone.stop()
    result, _text = run_module(keystone_token_check.main, {"auth": keystone.auth(), "connect_retries": 2,
                                                           "connect_retry_delay": 0.01})
    assert result["failed"] and result["msg"].startswith("Keystone at %s is not reachable: authentication failed 2 times"
                                                         % url), result["msg"]


# -- keystone_endpoint_regions ----------------------------------------------------------

def catalog(server):
    state = server.state
    service = state.add("services", name="glance", type="image", enabled=True)
    for interface in ("public", "internal"):
        state.add("endpoints", service_id=service["id"], interface=interface, url="http://glance:9292",
                  region_id=None, enabled=True)
    return service


ENDPOINTS = [{"service": "glance", "type": "image", "interface": i, "url": "http://glance:9292"}
             for i in ("public", "internal")]


def test_endpoint_regions_moves_the_endpoints_once(keystone):
    keystone.bootstrap()
    catalog(keystone)
    result, _text = run_module(keystone_endpoint_regions.main, args(keystone, region="RegionOne", endpoints=ENDPOINTS),
                               check_mode=True)
    assert result["changed"] and [m["interface"] for m in result["moved"]] == ["public", "internal"]
    assert all(e["region_id"] is None for e in keystone.state.endpoints)
    result, _text = run_module(keystone_endpoint_regions.main, args(keystone, region="RegionOne", endpoints=ENDPOINTS))
    assert result["changed"] and all(e["region_id"] == "RegionOne" for e in keystone.state.endpoints)
    result, _text = run_module(keystone_endpoint_regions.main, args(keystone, region="RegionOne", endpoints=ENDPOINTS))
    assert not result["changed"] and result["moved"] == []


def test_endpoint_regions_failures(keystone):
    keystone.bootstrap()
    result, _text = run_module(keystone_endpoint_regions.main, args(keystone, region="Nowhere", endpoints=ENDPOINTS))
    assert result["failed"] and result["msg"] == (
        "cannot put the endpoints into region Nowhere, nothing was changed: region Nowhere does not exist in Keystone "
        "(keystone-manage bootstrap --bootstrap-region-id creates it); service glance (type image) does not exist; "
        "service glance (type image) does not exist")


# -- keystone_role_assignments ----------------------------------------------------------

def test_role_assignments_grant_once_and_check_mode_tolerates_missing_users(keystone):
    keystone.bootstrap()
    wanted = [{"user": "glance", "project": "service", "roles": ["service", "admin"]}]
    result, _text = run_module(keystone_role_assignments.main, args(keystone, assignments=wanted), check_mode=True)
    assert result["changed"] and result["assignments"][0]["missing_user"] is True
    keystone.state.add("users", name="glance", domain_id="default", enabled=True, password="x-123456789")
    result, _text = run_module(keystone_role_assignments.main, args(keystone, assignments=wanted))
    assert result["changed"] and result["assignments"][0]["granted"] == ["service", "admin"]
    assert len(keystone.state.assignments) == 3
    result, _text = run_module(keystone_role_assignments.main, args(keystone, assignments=wanted))
    assert not result["changed"] and result["assignments"][0]["granted"] == []


def test_role_assignments_report_every_missing_thing(keystone):
    keystone.bootstrap()
    wanted = [{"user": "glance", "project": "nope", "roles": ["service"]},
              {"user": "x", "user_domain": "Other", "project": "service", "roles": ["auditor"]}]
    result, _text = run_module(keystone_role_assignments.main, args(keystone, assignments=wanted))
    assert result["failed"] and result["msg"] == (
        "cannot grant the roles, nothing was changed: domain Other does not exist; "
        "project nope does not exist in domain Default; role auditor does not exist; "
        "user glance does not exist in domain Default")


# -- korc_credentials and keystone_verify --------------------------------------------------

def korc_args(server, **extra):
    return args(server, namespace="openstack", kubeconfig="/k.yaml", region="RegionOne", **extra)


def stored(kube, name="k-orc-clouds-yaml"):
    secret = kube.find("v1", "Secret", name, "openstack")
    return yaml.safe_load(base64.b64decode(secret["data"]["clouds.yaml"]).decode())["clouds"]["openstack"]


def test_korc_credentials_mints_once_and_replaces_a_revoked_credential(keystone, kube):
    keystone.bootstrap()
    result, _text = run_module(korc_credentials.main, korc_args(keystone), check_mode=True)
    assert result["changed"] and result["minted"] and result["secret"]["result"] == "created"
    assert keystone.state.credentials == [] and kube.find("v1", "Secret", "k-orc-clouds-yaml", "openstack") is None

    result, text = run_module(korc_credentials.main, korc_args(keystone))
    assert result["changed"] and result["minted"] and result["reason"] == \
        "the Secret openstack/k-orc-clouds-yaml does not exist"
    (credential,) = keystone.state.credentials
    cloud = stored(kube)
    assert cloud["auth"]["application_credential_id"] == credential["id"] == result["application_credential_id"]
    assert cloud["auth"]["auth_url"] == keystone.url and cloud["region_name"] == "RegionOne"
    assert credential["roles"] == ["admin"]
    assert_hidden(text, credential["secret"])

    result, _text = run_module(korc_credentials.main, korc_args(keystone))
    assert not result["changed"] and result["reason"] == "valid" and len(keystone.state.credentials) == 1

    keystone.state.credentials[0]["secret"] = "revoked-in-keystone"
    result, text = run_module(korc_credentials.main, korc_args(keystone))
    assert result["minted"] and result["reason"] == "the credential in the Secret no longer issues a token (HTTP 401)"
    assert result["deleted_application_credentials"] == [credential["id"]]
    assert [c["id"] for c in keystone.state.credentials] == [result["application_credential_id"]]
    assert_hidden(text, keystone.state.credentials[0]["secret"])


def korc_secret(credential_id, secret, url):
    text = yaml.safe_dump(korc_credentials.clouds_yaml("openstack", url, credential_id, secret, "RegionOne", "internal"))
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "k-orc-clouds-yaml", "namespace": "openstack"},
            "data": {"clouds.yaml": base64.b64encode(text.encode()).decode()}}


def test_korc_credentials_that_lose_a_race_drop_their_own_and_keep_the_winners(keystone, kube, monkeypatch):
    """Two runs at once: the other one writes the Secret between this one's read and write."""
    keystone.bootstrap()
    mint = korc_credentials.KorcCredentialsModule.mint
    winner = {}

    def racing_mint(self, user_id, name):
        if not winner:
            winner["id"], winner["secret"] = mint(self, user_id, name)
            live = kube.find("v1", "Secret", "k-orc-clouds-yaml", "openstack")
            if live is None:
                kube.add(korc_secret(winner["id"], winner["secret"], keystone.url))
            else:  # the other run replaced it over the version both read
                live["data"] = korc_secret(winner["id"], winner["secret"], keystone.url)["data"]
                kube.add(live)
        return mint(self, user_id, name)

    monkeypatch.setattr(korc_credentials.KorcCredentialsModule, "mint", racing_mint)
    result, _text = run_module(korc_credentials.main, korc_args(keystone))
    assert not result.get("failed"), result
    assert result["reason"] == "another run replaced the credential at the same time" and not result["minted"]
    assert [c["id"] for c in keystone.state.credentials] == [winner["id"]] == [result["application_credential_id"]]
    assert len(result["deleted_application_credentials"]) == 1
    assert stored(kube)["auth"]["application_credential_id"] == winner["id"]

    # The same when the Secret exists with a revoked credential: the replacement is made over the version read.
    keystone.state.credentials[0]["secret"] = "revoked-in-keystone"
    revoked = winner["id"]
    winner.clear()
    result, _text = run_module(korc_credentials.main, korc_args(keystone))
    assert not result.get("failed"), result
    assert stored(kube)["auth"]["application_credential_id"] == winner["id"] == result["application_credential_id"]
    assert [c["id"] for c in keystone.state.credentials] == [winner["id"]]
    assert revoked in result["deleted_application_credentials"]


def test_korc_credentials_keep_a_working_replaced_credential_until_a_later_run(keystone, kube, monkeypatch):
    keystone.bootstrap()
    keystone.state.add("roles", name="member")
    keystone.state.grant("admin", "admin", "member")
    run_module(korc_credentials.main, korc_args(keystone))
    (old,) = keystone.state.credentials
    result, _text = run_module(korc_credentials.main, korc_args(keystone, roles=["admin", "member"]))
    assert result["reason"] == "the credential in the Secret lacks roles member"
    assert result["minted"] and result["pending_delete"] == old["id"]
    assert old["id"] in [c["id"] for c in keystone.state.credentials]
    # A later run, once the Secret has held the new credential long enough, deletes it.
    monkeypatch.setattr(korc_credentials, "held_for", lambda live, now: 60)
    result, _text = run_module(korc_credentials.main, korc_args(keystone, roles=["admin", "member"]))
    assert result["changed"] and result["deleted_application_credentials"] == [old["id"]]
    assert [c["id"] for c in keystone.state.credentials] == [result["application_credential_id"]]


def test_korc_credentials_rotate_to_a_new_version_and_delete_the_old_one_in_the_same_run(keystone, kube, monkeypatch):
    keystone.bootstrap()
    run_module(korc_credentials.main, korc_args(keystone))
    (old,) = keystone.state.credentials
    slept = []
    monkeypatch.setattr(korc_credentials.time, "sleep", slept.append)
    result, _text = run_module(korc_credentials.main, korc_args(keystone, version=2, replaced_grace=7))
    assert result["reason"] == "credential version 2 is asked, the Secret holds version 0 (a rotation)"
    assert result["minted"] and "pending_delete" not in result and slept == [7]
    assert result["deleted_application_credentials"] == [old["id"]]
    assert [c["id"] for c in keystone.state.credentials] == [result["application_credential_id"]]
    secret = kube.find("v1", "Secret", "k-orc-clouds-yaml", "openstack")
    assert secret["metadata"]["annotations"] == {korc_credentials.VERSION_ANNOTATION: "2"}
    result, _text = run_module(korc_credentials.main, korc_args(keystone, version=2, replaced_grace=7))
    assert not result["changed"] and result["reason"] == "valid" and slept == [7]


def test_held_for_reads_this_collections_last_write():
    live = {"metadata": {"managedFields": [{"manager": "c5c3.cobaltcore", "time": "2026-11-27T01:00:00Z"},
                                           {"manager": "k-orc", "time": "2026-11-27T01:05:00Z"}]}}
    assert korc_credentials.held_for(live, 1795741200 + 90) == 90
    assert korc_credentials.held_for({"metadata": {}}, 1795741290) == 0


def test_verify_checks_catalog_users_and_credentials(keystone, kube):
    keystone.bootstrap()
    state = keystone.state
    service = state.add("services", name="glance", type="image", enabled=True)
    for interface in ("public", "internal"):
        state.add("endpoints", service_id=service["id"], interface=interface, url="http://glance:9292",
                  region_id="RegionOne", enabled=True)
    run_module(korc_credentials.main, korc_args(keystone))
    services = [{"name": "glance", "type": "image", "public_url": "http://glance:9292",
                 "internal_url": "http://glance:9292"}]
    verify = args(keystone, namespace="openstack", kubeconfig="/k.yaml", region="RegionOne", services=services)
    result, _text = run_module(keystone_verify.main, verify, check_mode=True)
    assert not result.get("failed") and result["problems"] == [], result
    assert result["checked"] == {"services": 1, "endpoints": 2, "users": 0, "credentials": 1}

    services = [dict(services[0], user=True, roles=["service"]),
                {"name": "nova", "type": "compute", "public_url": "http://n", "internal_url": "http://n"}]
    result, text = run_module(keystone_verify.main, dict(verify, services=services))
    assert result["failed"] and result["problems"] == [
        "the catalog has no service nova of type compute",
        "service user glance does not exist in domain Default",
        "Secret openstack/glance-keystone-credentials (application credential of glance) does not exist"]
    assert result["msg"].startswith("Keystone verification of namespace openstack against %s found 3 problem(s):"
                                    % keystone.url)
    assert_hidden(text, SECRET, state.credentials[0]["secret"])
