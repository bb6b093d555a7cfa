# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes connection is built from its own options only, in every module."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.connection import KUBE_CONNECTION_SPEC, KubeConnection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule, MaskingAnsibleModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneModule
from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    apply, cluster_info, control_plane_health, gardener_kubeconfig, gardener_shoot, generated_secret, ironcore_bmc, ironcore_server_claim,
    ironcore_server_info, openstack_cluster_claim_status, openstack_cluster_claims, wait)

from module_harness import KEYSTONE_MODULES, SECRET_B64, run_module
from module_harness import keystone, kube  # noqa: F401  # pylint: disable=unused-import

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

KUBE_MODULES = {
    apply: {"definition": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}},
    wait: {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "n"}], "timeout": 0},
    generated_secret: {"namespace": "n", "secrets": [{"name": "s", "generate": ["password"]}]},
    gardener_shoot: {"namespace": "garden-p", "shoots": [{"name": "x", "spec": {"region": "r"}}], "wait": False},
    gardener_kubeconfig: {"namespace": "garden-p", "shoots": [{"name": "x", "path": "/nonexistent/x.yaml"}]},
    ironcore_bmc: {},
    ironcore_server_claim: {"namespace": "n", "pools": []},
    ironcore_server_info: {},
    cluster_info: {},
    control_plane_health: {"name": "lab"},
    openstack_cluster_claims: {"region": "lab"},
    openstack_cluster_claim_status: {"statuses": [{"namespace": "n", "name": "a"}]},
}

# Keystone's own TLS, timeout and interface settings, none of which may reach the Kubernetes client.
KEYSTONE_CONNECTION = {"validate_certs": False, "ca_cert": "/keystone/ca.pem", "client_cert": "/keystone/cert.pem",
                       "client_key": "/keystone/key.pem", "api_timeout": 7, "interface": "internal"}


def test_both_bases_share_the_kubernetes_mixin():
    assert issubclass(KubeModule, KubeConnection) and issubclass(KeystoneModule, KubeConnection)
    for name in ("client", "applier", "record", "hide", "hide_secret_values", "_with_requests"):
        assert name not in vars(KeystoneModule) and name not in vars(KubeModule), name


@pytest.mark.parametrize("module", list(KEYSTONE_MODULES), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_keystone_options_never_reach_the_kubernetes_client(module, keystone, kube):
    keystone.bootstrap()
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keystone-admin-credentials",
                                                                 "namespace": "openstack"},
              "data": {"password": SECRET_B64}})
    args = dict(KEYSTONE_MODULES[module], kubeconfig="/clusters/control-plane.yaml", context="control-plane",
                secret_auth={"auth_url": keystone.url, "secret_namespace": "openstack",
                             "secret_name": "keystone-admin-credentials"}, connect_retries=1, **KEYSTONE_CONNECTION)
    result, _text = run_module(module.main, args)
    assert kube.clients, result
    assert all(auth == {"kubeconfig": "/clusters/control-plane.yaml", "context": "control-plane"}
               for auth in kube.clients), kube.clients
    # And Keystone got its own settings: the password came from the Secret, authentication worked.
    assert ("POST", "/v3/auth/tokens", {}) in keystone.state.requests, result


@pytest.mark.parametrize("module", list(KUBE_MODULES), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_kubernetes_modules_pass_every_connection_option_to_the_client(module, kube, tmp_path):
    connection = {"kubeconfig": "/clusters/garden.yaml", "context": "garden", "host": "https://10.0.0.1:6443",
                  "api_key": "bearer-1", "username": "u", "password": "p", "validate_certs": False,
                  "ca_cert": str(tmp_path / "ca.pem"), "client_cert": str(tmp_path / "c.pem"),
                  "client_key": str(tmp_path / "k.pem"), "proxy": "http://proxy:3128", "no_proxy": "localhost",
                  "proxy_headers": {"proxy_basic_auth": "a:b", "basic_auth": None, "user_agent": "ua"},
                  "persist_config": False, "impersonate_user": "someone", "impersonate_groups": ["g"]}
    run_module(module.main, dict(KUBE_MODULES[module], **connection))
    assert sorted(connection) == sorted(KUBE_CONNECTION_SPEC)
    assert kube.clients and all(auth == connection for auth in kube.clients), kube.clients


def test_kubernetes_aliases_are_kubernetes_cores(kube):
    run_module(ironcore_server_info.main, {"verify_ssl": False, "ssl_ca_cert": "/ca.pem", "cert_file": "/c.pem",
                                           "key_file": "/k.pem"})
    (auth,) = kube.clients
    assert (auth["validate_certs"], auth["ca_cert"], auth["client_cert"], auth["client_key"]) == (
        False, "/ca.pem", "/c.pem", "/k.pem")


class _Captured(Exception):
    pass


def _argument_spec(module, monkeypatch):
    """The argument spec a module hands to AnsibleModule (both bases build a MaskingAnsibleModule)."""
    def capture(self, argument_spec, *args, **kwargs):
        raise _Captured(argument_spec)
    monkeypatch.setattr(MaskingAnsibleModule, "__init__", capture)
    with pytest.raises(_Captured) as captured:
        module.main()
    monkeypatch.undo()
    return captured.value.args[0]


def _shape(options):
    return dict((name, {"type": option.get("type") or "str", "elements": option.get("elements"),
                        "aliases": sorted(option.get("aliases") or []), "choices": sorted(option.get("choices") or []),
                        "default": option.get("default"),
                        "suboptions": _shape(option.get("options") or option.get("suboptions") or {})})
                for name, option in options.items())


def test_every_modules_documentation_is_its_argument_spec(monkeypatch):
    """The doc fragments (kube_connection, kube_connection.keystone_modules) document what the bases add."""
    modules = list(KEYSTONE_MODULES) + list(KUBE_MODULES)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-doc"), "-t", "module", "--json"]
                         + ["c5c3.cobaltcore.%s" % m.__name__.rsplit(".", 1)[-1] for m in modules],
                         env=env, cwd=REPO, capture_output=True, text=True, check=True)
    docs = json.loads(out.stdout)
    for module in modules:
        name = "c5c3.cobaltcore.%s" % module.__name__.rsplit(".", 1)[-1]
        documented = _shape(docs[name]["doc"]["options"])
        spec = _shape(_argument_spec(module, monkeypatch))
        assert sorted(documented) == sorted(spec), name
        for option in spec:
            assert documented[option] == spec[option], (name, option)
