# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kubeconfig given as text (``lookup('file', ...)`` without ``| from_yaml``) works in every module, and its
credentials never appear: not in msg, not in invocation, not anywhere in the module's output, on success and
on each failure path (unparsable, no current context, unreachable server, a bad option)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import datetime
import functools
import importlib
import os
import socket

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import client as kube_client
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection, kubeconfig as kubeconfig_utils
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import recheck
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

from module_harness import CLIENT_KEY_DATA, KEYSTONE_MODULES, SECRET_B64, TOKEN, assert_hidden, run_module
from module_harness import keystone, kube  # noqa: F401  # pylint: disable=unused-import

PASSWORD = "basic-auth-password-never-shown"
KEY_PEM = base64.b64decode(CLIENT_KEY_DATA).decode()
CERT_DATA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIBpublic\n-----END CERTIFICATE-----\n").decode()
CREDENTIALS = (TOKEN, PASSWORD, CLIENT_KEY_DATA) + tuple(line for line in KEY_PEM.splitlines() if "PRIVATE" not in line)
MODULES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "modules")
MODULES = sorted(name[:-3] for name in os.listdir(MODULES_DIR) if name.endswith(".py") and name != "__init__.py")
KEYSTONE_NAMES = set(m.__name__.rsplit(".", 1)[-1] for m in KEYSTONE_MODULES)

ROOK = "ceph.rook.io/v1"
FLUX_SOURCE = "source.toolkit.fluxcd.io/v1"
FLUX_HELM = "helm.toolkit.fluxcd.io/v2"
# Each Kubernetes module with arguments that succeed against an empty API server (plus the kinds it reads).
# The modules that reach a second cluster, and the option of its kubeconfig.
SECOND_KUBECONFIG = {"secret_copy": "target_kubeconfig", "key_backup": "store_kubeconfig"}
KUBE_ARGS = {
    "apply": {"definition": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}},
    "ceph_cluster_info": {"pool": "st-pool-a"},
    "cluster_info": {},
    "control_plane_health": {"name": "lab"},
    "flux_releases": {"cluster": "c", "groups": [], "operators": [], "repositories": {}},
    "gardener_kubeconfig": {"namespace": "garden-p", "shoots": []},
    "gardener_cluster_info": {"namespace": "garden-p", "clusters": ["x"]},
    "gardener_shoot": {"namespace": "garden-p", "shoots": [], "wait": False},
    "generated_secret": {"namespace": "n", "secrets": [{"name": "s", "generate": ["password"]}]},
    "hypervisor_nodes": {"workers": 0, "zone": "a", "wait": False},
    "hypervisor_maintenance": {"node": "n", "state": "on"},
    "storage_maintenance": {"node": "n", "state": "on"},
    "database_backup": {"settings": {}},
    "database_restore": {"namespace": "n", "backup": "b", "confirm": "n"},
    "ovn_database": {"action": "backup", "backup_id": "b",
                     "settings": {"image": "ovn", "storage": {"volume": {"emptyDir": {}}}}},
    "ironcore_bmc": {},
    "ironcore_bmc_credentials": {"secrets": [{"name": "bmc-x", "username": "u", "password": "bmc-password"}],
                                 "bmcs": []},
    "ironcore_server_claim": {"namespace": "n", "pools": []},
    "ironcore_server_info": {},
    "keystone_verification_state": {"clusters": [{
        "name": "t", "namespace": "n", "settings": {"region": "r", "services": ["keystone"]},
        "keystone": {"api_version": "v1", "kind": "ConfigMap", "name": "a"}}]},
    "openstack_cluster_claim_status": {"statuses": [{"namespace": "n", "name": "a"}]},
    "openstack_cluster_claims": {"region": "lab"},
    "openstack_release": {"control_planes": [{"namespace": "openstack", "name": "lab"}], "release": "2026.1"},
    "keystone_key_rotation": {"control_planes": [{"namespace": "openstack", "name": "lab"}], "rotation_id": "t1"},
    "keystone_admin_password": {"control_planes": [{"namespace": "openstack", "name": "lab"}], "rotation_id": "t1"},
    "hypervisor_rollout": {"version": "1592.7"},
    "gardener_kubernetes_version": {"project": "p", "version": "1.34", "shoots": [{"name": "s", "stage": "control plane"}]},
    "ovn_verify": {"plan": {}, "pools": [], "wait": False},
    "region_lock": {"region": "lab", "state": "released"},
    "secret_copy": {"copies": []},
    "key_backup": {"cluster": "lab-control-plane", "backup_id": "k1", "settings": {"passphrase": "a passphrase of the lab"}},
    "tenant_objects": {"name": "t", "side": "storage"},
    "wait": {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "n"}], "timeout": 0},
}
EXTRA_KINDS = {
    (ROOK, "CephCluster"): ("cephclusters", True), ("v1", "Node"): ("nodes", False),
    (FLUX_SOURCE, "HelmRepository"): ("helmrepositories", True), (FLUX_HELM, "HelmRelease"): ("helmreleases", True),
    ("coordination.k8s.io/v1", "Lease"): ("leases", True),
    ("k8s.mariadb.com/v1alpha1", "Backup"): ("backups", True),
    ("k8s.mariadb.com/v1alpha1", "MariaDB"): ("mariadbs", True),
}
EXTRA_KINDS.update(((naming.KORC_API_VERSION, kind), (kind.lower() + "s", True)) for kind in recheck.KORC_KINDS)


def kubeconfig_text(server="https://127.0.0.1:6443", current=True):
    """A kubeconfig's YAML text whose user holds a token, a client certificate with its key and a password."""
    user = {"token": TOKEN, "client-certificate-data": CERT_DATA, "client-key-data": CLIENT_KEY_DATA,
            "username": "admin", "password": PASSWORD}
    config = {"apiVersion": "v1", "kind": "Config",
              "clusters": [{"name": "lab", "cluster": {"server": server}}],
              "users": [{"name": "admin", "user": user}],
              "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "admin"}}]}
    if current:
        config["current-context"] = "lab"
    return yaml.safe_dump(config)


def unparsable_text():
    return "users:\n- name: admin\n  user: {token: %s, password: %s\n" % (TOKEN, PASSWORD)


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def module_args(name, keystone_server, text, **extra):
    """The module's arguments, its Kubernetes connection the kubeconfig text (every kubeconfig option of it)."""
    if name in KEYSTONE_NAMES:
        module = importlib.import_module("ansible_collections.c5c3.cobaltcore.plugins.modules." + name)
        args = dict(KEYSTONE_MODULES[module], connect_retries=1, secret_auth={
            "auth_url": keystone_server.url, "secret_namespace": "openstack", "secret_name": "admin-pw"})
    else:
        args = dict(KUBE_ARGS[name])
    if name in SECOND_KUBECONFIG:
        args[SECOND_KUBECONFIG[name]] = text
    args.update(kubeconfig=text, **extra)
    return args


def run(name, args):
    module = importlib.import_module("ansible_collections.c5c3.cobaltcore.plugins.modules." + name)
    return run_module(module.main, args)


@pytest.fixture
def resolving_kube(kube, monkeypatch):
    """The FakeKube, whose clients resolve their auth options as KubeClient does (parsing the text)."""
    kube.kinds.update(EXTRA_KINDS)
    kube.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}})
    kube.add({"apiVersion": ROOK, "kind": "CephCluster", "metadata": {"name": "rook-ceph", "namespace": "rook-ceph"},
              "status": {"phase": "Ready", "ceph": {"health": "HEALTH_OK", "fsid": "7f3cba36-2d8b-4c55-9f1e-2a6b0d4e8a10"}}})
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "admin-pw", "namespace": "openstack"},
              "data": {"password": SECRET_B64}})
    kube.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rook-ceph-mon-endpoints",
                                                                    "namespace": "rook-ceph"},
              "data": {"data": "a=127.0.0.1:6789", "csi-cluster-config-json": "[]"}})
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "rook-ceph-mon", "namespace": "rook-ceph"},
              "data": {"fsid": base64.b64encode(b"7f3cba36-2d8b-4c55-9f1e-2a6b0d4e8a10").decode()}})
    renewed = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    for lease in flux.CONTROLLER_LEASES:  # a running Flux
        kube.add({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                  "metadata": {"name": lease, "namespace": "flux-system"},
                  "spec": {"holderIdentity": "x", "renewTime": renewed, "leaseDurationSeconds": 60}})
    answers = {"/version": {"major": "1", "minor": "33", "gitVersion": "v1.33.0"}, "/api": {"versions": ["v1"]}, "/apis": {"groups": []}}

    def request(method, path, body, query):
        if path in answers:
            return 200, answers[path]
        if method == "POST":
            return kube.create(path, body, bool(query and query.get("dryRun")))
        return kube.update(body) if method == "PUT" else (404, {})
    kube.on_request = request
    endpoints = []
    fake_client = kube.client

    def client(auth, **options):
        endpoints.append(kubeconfig_utils.resolve(auth, environ={}))
        return fake_client(auth, **options)
    monkeypatch.setattr(connection, "KubeClient", client)
    kube.endpoints = endpoints
    return kube


def test_every_module_is_covered():
    assert sorted(set(KUBE_ARGS) | KEYSTONE_NAMES) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_a_kubeconfig_text_is_read_and_its_credentials_never_shown(name, resolving_kube, keystone):
    keystone.bootstrap()
    service = keystone.state.add("services", name="keystone", type="identity", enabled=True)
    keystone.state.add("endpoints", service_id=service["id"], interface="public", url="http://k/v3",
                       region_id="RegionOne", enabled=True)
    result, text = run(name, module_args(name, keystone, kubeconfig_text()))
    # keystone_verify reports what this empty Keystone lacks (its catalog, K-ORC's Secret) as failed: it ran;
    # openstack_release and the rotation modules find no ControlPlane, gardener_kubernetes_version no Project,
    # hypervisor_rollout no Hypervisor kind, database_restore no Backup, ovn_database no OVNCluster, key_backup no
    # ControlPlane, in the empty API server.
    assert not result.get("failed") or name == "keystone_verify" and result["checked"]["services"] \
        or name in ("openstack_release", "keystone_key_rotation", "keystone_admin_password",
                    "gardener_kubernetes_version", "ovn_database") \
        and "does not exist" in result["msg"] or name == "hypervisor_rollout" and "does not serve" in result["msg"] \
        or name == "database_restore" and "no Backup b in namespace n" in result["msg"] \
        or name == "key_backup" and "the cluster has no ControlPlane" in result["msg"], result
    assert resolving_kube.endpoints and all(e.token == TOKEN and e.host == "https://127.0.0.1:6443"
                                            for e in resolving_kube.endpoints)
    assert result["invocation"]["module_args"]["kubeconfig"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    assert_hidden(text, *CREDENTIALS)


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("fault, expected", [
    (unparsable_text, "the kubeconfig given as text is not valid YAML at line"),
    (functools.partial(kubeconfig_text, current=False), "the kubeconfig given as text sets no current-context"),
])
def test_an_unusable_kubeconfig_text_fails_without_showing_it(name, fault, expected, resolving_kube, keystone):
    keystone.bootstrap()
    result, text = run(name, module_args(name, keystone, fault()))
    assert result["failed"] and expected in result["msg"], result
    assert_hidden(text, *CREDENTIALS)


@pytest.mark.parametrize("name", MODULES)
def test_an_unreachable_server_fails_without_showing_the_kubeconfig(name, keystone, monkeypatch):
    keystone.bootstrap()
    monkeypatch.setattr(connection, "KubeClient", functools.partial(kube_client.KubeClient, retries=0, retry_budget=1))
    server = "https://127.0.0.1:%d" % closed_port()
    result, text = run(name, module_args(name, keystone, kubeconfig_text(server=server)))
    # cluster_info reports an unreachable cluster as its result; every other module fails.
    assert result.get("failed") or result.get("reachable") is False, result
    assert_hidden(text, *CREDENTIALS)


@pytest.mark.parametrize("name", MODULES)
def test_a_bad_option_fails_validation_without_showing_the_kubeconfig(name, resolving_kube, keystone):
    result, text = run(name, module_args(name, keystone, kubeconfig_text(), impersonate_groups={"not": "a list"})
                       if name not in KEYSTONE_NAMES else module_args(name, keystone, kubeconfig_text(),
                                                                      connect_retries="many"))
    assert result["failed"] and ("impersonate_groups" in result["msg"] or "connect_retries" in result["msg"]), result
    assert resolving_kube.clients == []
    assert_hidden(text, *CREDENTIALS)
