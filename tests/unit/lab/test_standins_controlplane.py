# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The c5c3-operator stand-in and its children's operators against an in-memory API server.

Each pass of the loop is run by hand with all delays 0, so the order in which the ControlPlane's
children appear and turn ready is exact; the children's status is judged by the collection's own
readiness rules. The lab tests (tests/integration/test_lab_standins_controlplane.py) do the same
against a real API server.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import itertools
import os
import sys

import pytest

from conftest import REPO, merge_patch

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import c5c3, operators, settings  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness  # noqa: E402

NS = "cp-unit"
ZERO = {k: 0 for k in settings.DEFAULT_DELAYS}


class Store:
    """Objects by (api_version, plural, namespace, name), with generation and status managers."""

    def __init__(self):
        self.objects = {}
        self.created = []  # kinds in creation order
        self.uids = itertools.count(1)
        self.korc = True
        self.applies = []  # (kind, field manager, forced) of every apply

    @staticmethod
    def parse(url):
        parts = url.strip("/").split("/")
        api_version = "/".join(parts[1:3]) if parts[0] == "apis" else "v1"
        rest = parts[3:] if parts[0] == "apis" else parts[2:]
        namespace = None
        if rest[:1] == ["namespaces"]:
            namespace, rest = rest[1], rest[2:]
        return api_version, rest[0], namespace, (rest[1] if len(rest) > 1 else None)


class FakeKube:
    def __init__(self, store, manager):
        self.store, self.manager = store, manager

    def list(self, url):
        api_version, plural, _namespace, _name = Store.parse(url)
        return [copy.deepcopy(o) for k, o in sorted(self.store.objects.items()) if k[:2] == (api_version, plural)]

    def get(self, url):
        if url == c5c3.ServiceCatalog.KORC_API:
            return {} if self.store.korc else None
        if url.count("/") == 3:  # another API group: not served here (no ovn-operator)
            return None
        return copy.deepcopy(self.store.objects.get(Store.parse(url)))

    def apply(self, url, obj, force=True):
        key = Store.parse(url)
        live = self.store.objects.get(key)
        if live is None:
            live = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                    "metadata": {"uid": "uid-%d" % next(self.store.uids), "generation": 1, "managedFields": []}}
            self.store.objects[key] = live
            self.store.created.append(obj["kind"])
        before = copy.deepcopy(live.get("spec"))
        merge_patch(live["metadata"], dict(obj["metadata"].items()))
        merge_patch(live.setdefault("spec", {}), obj["spec"])
        if before is not None and before != live["spec"]:
            live["metadata"]["generation"] += 1
        fields = live["metadata"]["managedFields"]
        if not any(f["manager"] == self.manager and f.get("operation") == "Apply" for f in fields):
            fields.append({"manager": self.manager, "operation": "Apply", "force": force})
        self.store.applies.append((obj["kind"], self.manager, force))
        return copy.deepcopy(live)

    def patch(self, url, obj, patch, subresource=None):
        live = self.store.objects.get(Store.parse(url))
        if live is None:
            return None
        if subresource == "status":
            merge_patch(live.setdefault("status", {}), patch["status"])
            fields = live["metadata"]["managedFields"]
            if not any(f["manager"] == self.manager for f in fields):
                fields.append({"manager": self.manager, "subresource": "status"})
        return copy.deepcopy(live)

    def delete(self, url):
        return self.store.objects.pop(Store.parse(url), None)


class Settings:
    def __init__(self):
        self.data = {"delays": ZERO}

    def get(self):
        return settings.StandinSettings(self.data)

    def changed(self):
        return False


class Running:
    """Every operator's Deployment is Available (deployments.Operators)."""

    @staticmethod
    def refresh():
        pass

    @staticmethod
    def runs(operator):
        return True


@pytest.fixture
def world(monkeypatch):
    store = Store()
    monkeypatch.setattr(c5c3, "Kube", lambda cluster, manager: FakeKube(store, manager))
    monkeypatch.setattr(operators, "Kube", lambda cluster, manager: FakeKube(store, manager))
    monkeypatch.setattr(c5c3, "Waker", lambda *args: None)
    op = c5c3.C5C3Operator(cluster=None)
    op.settings = Settings()
    op.running = Running()
    store.objects[("c5c3.io/v1alpha1", "controlplanes", NS, "cp")] = {
        "apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
        "metadata": {"name": "cp", "namespace": NS, "uid": "cp-uid", "generation": 1, "managedFields": []},
        "spec": {"infrastructure": {"mariadb": {"replicas": 3, "storageSize": "100Gi"}, "rabbitmq": {"replicas": 3},
                                    "valkey": {"replicas": 3, "sentinel": {"enabled": True}},
                                    "memcached": {"replicas": 2, "memory": "1Gi"}},
                 "services": {n: {"enabled": True} for n in ("keystone", "glance", "placement", "nova", "neutron",
                                                             "cinder")},
                 "tempest": {"enabled": True}}}
    return store, op


def obj(store, plural, name):
    return next((o for k, o in store.objects.items() if k[1] == plural and k[3] == name), None)


def conditions(store):
    cp = obj(store, "controlplanes", "cp")
    return {c["type"]: c for c in (cp.get("status") or {}).get("conditions") or []}


def play_keystone_operator(store):
    """The keystone-operator stand-in's part: Ready for the current generation."""
    keystone = obj(store, "keystones", "keystone")
    if keystone is not None:
        gen = keystone["metadata"]["generation"]
        keystone["status"] = {"observedGeneration": gen, "endpoint": "http://127.0.0.1:26500/v3", "conditions": [
            {"type": "Ready", "status": "True", "reason": "AllReady", "observedGeneration": gen}]}


def test_children_in_dependency_order_each_ready(world):
    store, op = world
    op.reconcile()
    assert store.created == ["MariaDB", "RabbitmqCluster", "Valkey", "Memcached"]
    assert conditions(store)["InfrastructureReady"]["status"] == "False"
    op.reconcile()  # the infrastructure became ready at the end of the last pass
    assert store.created[4:] == ["Keystone"]
    assert conditions(store)["InfrastructureReady"]["status"] == "True"
    assert conditions(store)["CatalogReady"]["reason"] == "ServicesNotReady"
    play_keystone_operator(store)
    op.reconcile()
    assert store.created[5:] == ["Glance", "Placement"]
    op.reconcile()
    assert store.created[7:] == ["Nova", "Neutron", "Cinder"]
    for _round in range(3):
        op.reconcile()
    assert store.created[10:] == ["Tempest"]  # Cortex is not enabled
    cond = conditions(store)
    assert cond["Ready"]["status"] == "True", cond
    assert cond["OptionalReady"]["message"] == "Phases 6-7 (Scheduler, Testing): tempest ready"
    assert all(c["observedGeneration"] == 1 for c in cond.values())
    for (api_version, _plural, _namespace, _name), child in store.objects.items():
        if child["kind"] in operators.KINDS:
            verdict = readiness.evaluate(child)
            assert verdict.ready, (child["kind"], verdict.missing)
            assert child["metadata"]["ownerReferences"][0]["uid"] == "cp-uid"
    nova = obj(store, "novas", "nova")
    assert [d["kind"] for d in nova["spec"]["dependsOn"]] == ["Keystone", "Placement", "RabbitmqCluster", "Glance",
                                                              "MariaDB"]
    assert nova["spec"]["keystone"]["authUrl"] == "http://127.0.0.1:26500/v3"
    assert obj(store, "mariadbs", "mariadb")["spec"]["storage"]["size"] == "100Gi"
    assert obj(store, "memcacheds", "memcached")["spec"]["memcached"] == {"maxMemoryMB": 1024}
    assert obj(store, "controlplanes", "cp")["status"]["services"]["tempest"] == "Ready"


def test_terminal_mariadb_failure_blocks_the_phases_behind_it(world):
    store, op = world
    op.settings.data["failures"] = {"MariaDB/%s" % NS: {"reason": "GaleraNotReady", "message": "quorum lost",
                                                        "terminal": True}}
    for _round in range(3):
        op.reconcile()
    mariadb = obj(store, "mariadbs", "mariadb")
    assert mariadb["status"]["conditions"][0]["reason"] == "GaleraNotReady"
    assert not readiness.evaluate(mariadb).ready
    assert readiness.evaluate(obj(store, "memcacheds", "memcached")).ready
    assert "Keystone" not in store.created
    cond = conditions(store)
    assert cond["InfrastructureReady"]["status"] == "False"
    assert "Ready=False GaleraNotReady: quorum lost" in cond["InfrastructureReady"]["message"]
    assert "Keystone waits for mariadb" in cond["IdentityReady"]["message"]
    del op.settings.data["failures"]
    op.reconcile()
    assert "Keystone" not in store.created  # terminal: sticks until the MariaDB changes
    store.objects[("k8s.mariadb.com/v1alpha1", "mariadbs", NS, "mariadb")]["metadata"]["generation"] = 2
    op.reconcile()
    op.reconcile()
    assert "Keystone" in store.created


def test_a_failure_while_configured(world):
    store, op = world
    op.settings.data["failures"] = {"RabbitmqCluster": {"reason": "CreateError", "message": "no PVC"}}
    for _round in range(2):
        op.reconcile()
    rabbit = obj(store, "rabbitmqclusters", "rabbitmq")
    assert {c["type"]: c["reason"] for c in rabbit["status"]["conditions"]}["ReconcileSuccess"] == "CreateError"
    assert not readiness.evaluate(rabbit).ready
    del op.settings.data["failures"]
    op.reconcile()
    assert readiness.evaluate(obj(store, "rabbitmqclusters", "rabbitmq")).ready


def test_standin_and_collection_agree_on_the_dependency_graph_and_defaults():
    """The stand-in keeps its own copy of seed 003's graph (it plays the upstream operator): the
    collection's health report judges by the same data, so both copies must stay equal."""
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import dependency_graph, services
    assert {k: tuple(v) for k, v in c5c3.DEPENDS.items()} == dict(dependency_graph.DEPENDS)
    assert [c.key for c in c5c3.COMPONENTS] == [n for p in dependency_graph.PHASES for n in p["components"]]
    assert c5c3.DEFAULT_SERVICES == services.DEFAULT_SERVICES


def test_a_missing_service_section_takes_the_seed_default(world):
    """A tenant's ControlPlane composed from seed 002 has no `placement` section: Placement still runs
    (Nova needs it), as the health report expects; Cortex and Tempest stay off."""
    store, op = world
    cp = obj(store, "controlplanes", "cp")
    cp["spec"] = {"infrastructure": cp["spec"]["infrastructure"], "openstack": {"nova": {"enabled": True}}}
    op.reconcile()
    op.reconcile()
    play_keystone_operator(store)
    for _round in range(4):
        op.reconcile()
    assert store.created[4:] == ["Keystone", "Glance", "Placement", "Nova", "Neutron", "Cinder"]
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health
    enabled = control_plane_health.enabled_components(obj(store, "controlplanes", "cp"))
    infrastructure = ("mariadb", "rabbitmq", "valkey", "memcached", "k-orc")
    assert sorted(k for k, on in enabled.items() if on and k not in infrastructure) == sorted(c5c3.DEFAULT_SERVICES)
    assert conditions(store)["Ready"]["status"] == "True"


def test_the_keystone_bootstrap_is_projected_from_the_control_plane_and_taken_back(world):
    """Upstream's reconcileKeystone: bootstrap.adminPasswordSecretRef (<keystone>-admin-credentials, managed mode),
    .region (the ControlPlane's, default RegionOne) and .publicEndpoint (the keystone service's, only when set),
    applied server-side as cobaltcore-operator with force; a value someone else wrote is re-asserted."""
    store, op = world
    cp = obj(store, "controlplanes", "cp")
    cp["spec"]["global"] = {"region": "eu-de-1"}
    cp["spec"]["services"]["keystone"]["publicEndpoint"] = "https://keystone.eu-de-1.example.com/v3"
    op.reconcile()
    op.reconcile()
    keystone = obj(store, "keystones", "keystone")
    assert keystone["spec"]["bootstrap"] == {
        "adminPasswordSecretRef": {"name": "keystone-admin-credentials", "key": "password"}, "region": "eu-de-1",
        "publicEndpoint": "https://keystone.eu-de-1.example.com/v3"}
    assert keystone["spec"]["database"]["secretRef"] == {"name": "keystone-db-credentials"}
    assert set(store.applies) == {
        (kind, "cobaltcore-operator", True) for kind in store.created}
    # Another manager's value (a collection that still writes the CR): back to the ControlPlane's on the next pass.
    keystone["spec"]["bootstrap"]["publicEndpoint"] = "https://elsewhere.example.com/v3"
    keystone["metadata"]["generation"] += 1
    op.reconcile()
    assert obj(store, "keystones", "keystone")["spec"]["bootstrap"]["publicEndpoint"] == (
        "https://keystone.eu-de-1.example.com/v3")
    # Nothing to take back: no apply.
    applied = len(store.applies)
    op.reconcile()
    assert len([a for a in store.applies[applied:] if a[0] == "Keystone"]) == 0


def test_a_control_plane_without_region_or_public_endpoint_projects_upstreams_defaults(world):
    store, op = world
    op.reconcile()
    op.reconcile()
    bootstrap = obj(store, "keystones", "keystone")["spec"]["bootstrap"]
    assert bootstrap == {"adminPasswordSecretRef": {"name": "keystone-admin-credentials", "key": "password"},
                         "region": "RegionOne"}
    assert c5c3.keystone_bootstrap({"spec": {"global": {"region": "lab"}}}, {"publicEndpoint": ""}, "ks") == {
        "adminPasswordSecretRef": {"name": "ks-admin-credentials", "key": "password"}, "region": "lab"}
