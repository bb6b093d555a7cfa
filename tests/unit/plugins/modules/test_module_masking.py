# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret in any module's output, on the failure paths too; and no name starred out.

Each module runs in-process with a secret in its arguments (a Secret in a manifest, a BMC
password, an ignition, openstack.cloud's auth, and a kubeconfig's token and client key in
every module), then fails: at argument validation (which echoes every argument) and while
running. The whole output, what Ansible stores and prints with -vvv, must not hold the
secret, plain or base64.
"""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import api_error
from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    apply, cluster_info, control_plane_health, gardener_kubeconfig, gardener_shoot, generated_secret, ironcore_bmc, ironcore_server_claim,
    ironcore_server_info, wait)

from module_harness import KEYSTONE_MODULES, CLIENT_KEY_DATA, SECRET, TOKEN, assert_hidden, kubeconfig, run_module
from module_harness import keystone, kube  # noqa: F401  # pylint: disable=unused-import

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial0123456789\n-----END RSA PRIVATE KEY-----"
SECRET_MANIFEST = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "n"},
                   "stringData": {"password": SECRET, "tls.key": PEM}}
FORBIDDEN = api_error("PATCH", "/api/v1/namespaces/n/secrets/creds", 403, {"reason": "Forbidden", "message": "no"})


def secret_texts():
    return [SECRET, TOKEN, CLIENT_KEY_DATA] + [line for line in PEM.splitlines() if "PRIVATE" not in line]


# Per Kubernetes module: arguments carrying secrets, and how to make its run fail.
def _apply_args():
    return {"definition": [SECRET_MANIFEST, {"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": "a", "namespace": "n"}}]}


def _apply_text_args():
    return {"definition": yaml.safe_dump_all([SECRET_MANIFEST])}


def _generated_secret_args():
    return {"namespace": "n", "secrets": [{"name": "s", "generate": ["password"],
                                           "templates": {"conf": "password=%s" % SECRET}}]}


def _bmc_args():
    return {"secrets": [{"name": "bmc-1", "username": "root", "password": SECRET}],
            "bmcs": [{"name": "bmc-a", "mac_address": "52:54:00:00:00:01", "ip": "10.0.0.1", "secret": "bmc-1"}],
            "check_credentials": False}


def _claim_args():
    return {"namespace": "n", "pools": [{"name": "hv-a", "count": 1, "selector": {"matchLabels": {"a": "b"}},
                                         "image": "img", "ignition": SECRET}]}


def _shoot_args():
    return {"namespace": "garden-p", "shoots": [{"name": "x", "spec": {"region": "r"}}], "wait": False}


def _kubeconfig_args():
    return {"namespace": "garden-p", "shoots": [{"name": "x", "path": "/nonexistent/dir/x.yaml"}]}


KUBE_CASES = {
    "apply": (apply, _apply_args, ("PATCH", "Secret")),
    "apply-yaml-text": (apply, _apply_text_args, ("PATCH", "Secret")),
    "wait": (wait, lambda: {"resources": [{"api_version": "v1", "kind": "Secret", "name": "creds",
                                           "namespace": "n"}], "timeout": 0}, ("GET", "Secret")),
    # An absent Secret is created with a POST (create-only), through the client's request().
    "generated_secret": (generated_secret, _generated_secret_args, ("POST", "/api/v1/namespaces/n/secrets")),
    "gardener_shoot": (gardener_shoot, _shoot_args, ("PATCH", "Shoot")),
    "gardener_kubeconfig": (gardener_kubeconfig, _kubeconfig_args, ("GET", "Shoot")),
    "ironcore_bmc": (ironcore_bmc, _bmc_args, ("PATCH", "BMCSecret")),
    "ironcore_server_claim": (ironcore_server_claim, _claim_args, ("GET", "Server")),
    "ironcore_server_info": (ironcore_server_info, lambda: {}, ("GET", "Server")),
    "cluster_info": (cluster_info, lambda: {}, ("GET", "/version")),
    "control_plane_health": (control_plane_health, lambda: {"name": "lab"}, ("GET", "ControlPlane")),
}


@pytest.mark.parametrize("case", list(KUBE_CASES))
def test_kubernetes_modules_hide_secrets_when_validation_fails(case, kube):
    module, args, _failure = KUBE_CASES[case]
    # An invalid value for one option: AnsibleModule fails before the module runs, echoing every argument.
    result, text = run_module(module.main, dict(args(), kubeconfig=kubeconfig(), context=["not", "a", "string"],
                                                impersonate_groups={"not": "a list"}))
    assert result["failed"] and "impersonate_groups" in result["msg"], result
    assert kube.clients == []
    assert_hidden(text, *secret_texts())
    # Names stay readable: the kubeconfig's cluster c, user u, apiVersion v1.
    echoed = result["invocation"]["module_args"]["kubeconfig"]
    assert echoed["clusters"][0]["name"] == "c" and echoed["apiVersion"] == "v1", echoed


@pytest.mark.parametrize("case", list(KUBE_CASES))
def test_kubernetes_modules_hide_secrets_when_the_api_server_refuses(case, kube):
    module, args, (method, kind) = KUBE_CASES[case]
    kube.add({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
              "metadata": {"name": "x", "namespace": "garden-p"}})
    kube.failures[(method, kind)] = api_error(method, "/%s" % kind, 403, {"reason": "Forbidden", "message": "no"})
    result, text = run_module(module.main, dict(args(), kubeconfig=kubeconfig()), diff=True)
    assert result["failed"] and "forbidden" in result["msg"], result
    assert_hidden(text, *secret_texts())
    assert result["invocation"]["module_args"]["kubeconfig"]["clusters"][0]["name"] == "c"


def test_apply_hides_a_secret_when_another_option_fails_validation(kube):
    """The issue's case: wait_timeout "x" with a Secret's stringData.password."""
    result, text = run_module(apply.main, {"definition": SECRET_MANIFEST, "wait_timeout": "x"})
    assert result["failed"] and "wait_timeout" in result["msg"]
    assert_hidden(text, SECRET)
    assert result["invocation"]["module_args"]["definition"]["metadata"]["name"] == "creds"


def test_apply_hides_a_secret_in_diffs_and_results(kube):
    for _run in range(2):
        result, text = run_module(apply.main, dict(_apply_args(), kubeconfig=kubeconfig()), diff=True)
        assert not result.get("failed"), result
        assert_hidden(text, *secret_texts())
    assert kube.find("v1", "Secret", "creds", "n")["data"]["password"] == base64.b64encode(SECRET.encode()).decode()


def test_unparsable_yaml_text_is_hidden_as_a_whole(kube):
    text_with_secret = "kind: Secret\nstringData: {password: %s\n  broken: [" % SECRET
    result, text = run_module(apply.main, {"definition": text_with_secret, "wait_timeout": "x"})
    assert result["failed"]
    assert_hidden(text, SECRET)


def test_a_missing_kind_names_its_api_version(kube):
    """The opposite fault: with an in-memory kubeconfig, 'v1' was starred out of this message."""
    kube.kinds.pop(("v1", "Secret"))
    result, text = run_module(apply.main, dict(_apply_args(), kubeconfig=kubeconfig(cluster="c", user="v1")))
    assert result["failed"]
    assert result["msg"].startswith("the API server does not serve kind Secret in v1"), result["msg"]
    assert "********" not in text
    assert_hidden(text, *secret_texts())


def test_generated_secret_results_stay_readable(kube):
    """values and templates are no_log, yet the Secret names and request counts they share are not starred."""
    specs = [{"name": "glance-keystone-user", "namespace": "openstack", "labels": {"service": "glance"},
              "generate": ["password"], "values": {"region": "RegionOne"},
              "templates": {"clouds.yaml": {"clouds": {"glance": {"auth": {"username": "glance",
                                                                           "password": "${password}"},
                                                                  "identity_api_version": 1}}}}}]
    result, text = run_module(generated_secret.main, {"secrets": specs})
    assert result["changed"] and result["secrets"] == [
        {"name": "glance-keystone-user", "namespace": "openstack", "result": "created", "generated": ["password"]}]
    echoed = result["invocation"]["module_args"]["secrets"][0]
    assert echoed["values"] == {"region": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"}
    assert echoed["templates"]["clouds.yaml"]["clouds"]["glance"]["auth"]["username"] == "glance"
    assert result["requests"] == {"GET": 1, "POST": 1}
    password = base64.b64decode(kube.find("v1", "Secret", "glance-keystone-user", "openstack")["data"]["password"])
    assert_hidden(text, password.decode())
    result, text = run_module(generated_secret.main, {"secrets": specs})
    # One GET: the Secret read once (the applier is handed it); a template holds the number 1 too.
    assert not result["changed"] and result["requests"] == {"GET": 1}
    assert_hidden(text, password.decode())


def test_gardener_kubeconfig_hides_the_fetched_credentials_not_the_server(kube, tmp_path):
    fetched = yaml.safe_dump(kubeconfig(cluster="shoot", user="admin", server="https://api.x.example:443"))
    kube.add({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
              "metadata": {"name": "x", "namespace": "garden-p"}})
    kube.on_request = lambda method, path, body, query: (201, {"status": {
        "kubeconfig": base64.b64encode(fetched.encode()).decode(), "expirationTimestamp": "2999-01-01T00:00:00Z"}})
    result, text = run_module(gardener_kubeconfig.main, {
        "namespace": "garden-p", "kubeconfig": kubeconfig(),
        "shoots": [{"name": "x", "path": str(tmp_path / "x.yaml")}, {"name": "gone", "path": str(tmp_path / "g.yaml")}]})
    assert result["failed"] and "Shoot garden-p/gone does not exist" in result["msg"], result
    assert_hidden(text, *secret_texts())
    result, text = run_module(gardener_kubeconfig.main, {
        "namespace": "garden-p", "kubeconfig": kubeconfig(), "shoots": [{"name": "x", "path": str(tmp_path / "x.yaml")}]})
    assert result["shoots"][0]["server"] == "https://api.x.example:443", result
    assert_hidden(text, *secret_texts())


# -- Keystone modules ----------------------------------------------------------


def _ids(module):
    return module.__name__.rsplit(".", 1)[-1]


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=_ids)
def test_keystone_modules_hide_secrets_when_validation_fails(module, keystone, kube):
    args = dict(KEYSTONE_MODULES[module], auth=keystone.auth(), kubeconfig=kubeconfig(), connect_retries="many")
    result, text = run_module(module.main, args)
    assert result["failed"] and "connect_retries" in result["msg"], result
    assert_hidden(text, *secret_texts())


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=_ids)
def test_keystone_modules_hide_secrets_when_keystone_is_down(module, keystone, kube):
    keystone.bootstrap()
    keystone.state.down = True
    args = dict(KEYSTONE_MODULES[module], auth=keystone.auth(), kubeconfig=kubeconfig(), connect_retries=2,
                connect_retry_delay=0.01)
    result, text = run_module(module.main, args)
    assert result["failed"] and "is not reachable" in result["msg"], result
    assert_hidden(text, *secret_texts())
    # The endpoint and the user are named, not starred: only auth's password is a credential.
    assert keystone.url in result["msg"], result["msg"]
    assert result["invocation"]["module_args"]["auth"]["username"] == "admin"
    assert result["invocation"]["module_args"]["kubeconfig"]["clusters"][0]["name"] == "c"


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=_ids)
@pytest.mark.parametrize("case", ["bad-option", "keystone-down", "keystone-up"])
def test_keystone_modules_hide_the_password_of_a_cloud_given_as_settings(module, case, keystone, kube):
    """openstack.cloud's cloud may be a cloud's settings with their auth instead of a name in clouds.yaml."""
    keystone.bootstrap()
    keystone.state.down = case == "keystone-down"
    cloud = {"auth": keystone.auth(), "region_name": "RegionOne", "identity_api_version": 3}
    args = dict(KEYSTONE_MODULES[module], cloud=cloud, kubeconfig=kubeconfig(),
                connect_retries="many" if case == "bad-option" else 1)
    result, text = run_module(module.main, args)
    assert_hidden(text, *secret_texts())
    if case == "bad-option":
        # A failed validation echoes the arguments: the cloud's URL and user stay readable, its password not.
        assert result["failed"] and "connect_retries" in result["msg"], result
        assert result["invocation"]["module_args"]["cloud"]["auth"]["username"] == "admin"
        assert result["invocation"]["module_args"]["cloud"]["auth"]["auth_url"] == keystone.url
    elif case == "keystone-down":
        assert result["failed"] and "is not reachable" in result["msg"], result
        assert keystone.url in result["msg"], result["msg"]


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=_ids)
def test_keystone_modules_hide_the_secret_auth_password_when_its_secret_cannot_be_read(module, keystone, kube):
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "admin-pw", "namespace": "openstack"},
              "data": {"password": base64.b64encode(SECRET.encode()).decode()}})
    keystone.bootstrap()
    keystone.state.down = True
    args = dict(KEYSTONE_MODULES[module], kubeconfig=kubeconfig(), connect_retries=1,
                secret_auth={"auth_url": keystone.url, "secret_namespace": "openstack", "secret_name": "admin-pw"})
    result, text = run_module(module.main, args)
    assert result["failed"], result
    assert_hidden(text, *secret_texts())


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=_ids)
def test_keystone_modules_name_the_api_version_when_secret_auth_cannot_read_its_secret(module, keystone, kube):
    """The message seen: "the API server does not serve kind Secret in ********" (v1 of the kubeconfig)."""
    kube.kinds.pop(("v1", "Secret"))
    args = dict(KEYSTONE_MODULES[module], kubeconfig=kubeconfig(), connect_retries=1,
                secret_auth={"auth_url": keystone.url, "secret_namespace": "openstack", "secret_name": "admin-pw"})
    result, text = run_module(module.main, args)
    assert result["msg"] == ("secret_auth: reading Secret openstack/admin-pw failed: the API server does not serve "
                             "kind Secret in v1 (is its CRD installed?)"), result["msg"]
    assert "********" not in text
    assert_hidden(text, *secret_texts())


def test_a_kubeconfig_path_stays_readable(kube, tmp_path):
    path = tmp_path / "garden.yaml"
    path.write_text("apiVersion: v1\n")
    result, _text = run_module(wait.main, {"kubeconfig": str(path), "timeout": "x", "resources": []})
    assert result["failed"] and result["invocation"]["module_args"]["kubeconfig"] == str(path)


def test_a_kubeconfig_string_that_names_no_file_is_never_shown(kube):
    """It may be a kubeconfig's text or a token pasted by mistake: masked as a whole, and no message quotes it."""
    result, text = run_module(wait.main, {"kubeconfig": "/clusters/%s.yaml" % TOKEN, "timeout": "x", "resources": []})
    assert result["failed"] and result["invocation"]["module_args"]["kubeconfig"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    assert_hidden(text, TOKEN)
