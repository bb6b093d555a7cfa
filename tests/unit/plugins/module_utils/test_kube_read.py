# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read layer: which requests a batch costs, and that what it returns is exactly what a GET each returns."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import threading

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError, ResourceType
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import Reader, label_selector

LABEL = "c5c3.io/openstack-cluster-name"


class StoreClient:
    """An in-memory API: objects by (apiVersion, kind, namespace, name); it records every request."""

    KINDS = {("v1", "Secret"): True, ("v1", "Namespace"): False, ("v1", "ConfigMap"): True}

    def __init__(self, objects=(), refuse_cluster_list=None):
        self.objects = dict(((o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]), o)
                            for o in objects)
        self.calls = []
        self.refuse_cluster_list = refuse_cluster_list
        self._lock = threading.Lock()

    def resource(self, api_version, kind):
        if (api_version, kind) not in self.KINDS:
            raise KubeError("%s %s is not served" % (api_version, kind), status=404)
        return ResourceType(api_version, kind, kind.lower() + "s", self.KINDS[(api_version, kind)])

    def get(self, rtype, name, namespace=None):
        with self._lock:
            self.calls.append(("GET", rtype.kind, namespace, name))
        return self.objects.get((rtype.api_version, rtype.kind, namespace, name))

    def list(self, rtype, namespace=None, label_selector=None, field_selector=None):
        with self._lock:
            self.calls.append(("LIST", rtype.kind, namespace, label_selector))
        if namespace is None and rtype.namespaced and self.refuse_cluster_list:
            raise KubeError("forbidden", status=self.refuse_cluster_list)
        terms = []
        for term in (label_selector or "").split("),"):
            if term:
                key, values = term.rstrip(")").split(" in (")
                terms.append((key, set(values.split(","))))
        return [o for (api, kind, ns, unused), o in self.objects.items()
                if (api, kind) == (rtype.api_version, rtype.kind) and (namespace is None or ns == namespace)
                and all((o["metadata"].get("labels") or {}).get(k) in values for k, values in terms)]


def secret(name, namespace, **labels):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace, "labels": labels}}


def ref(obj, **labels):
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"],
            "namespace": meta.get("namespace"), "labels": labels if labels else meta.get("labels")}


def tenants(count, labelled=True):
    return [secret("admin", "openstack-t%d" % i, **({LABEL: "t%d" % i} if labelled else {})) for i in range(count)]


def test_objects_spread_over_namespaces_come_from_one_list_selecting_their_labels():
    live = tenants(5)
    other = secret("admin", "openstack-other", **{LABEL: "other"})
    client = StoreClient(live + [other])
    found = Reader(client).read([ref(o) for o in live])
    assert found == dict((("v1", "Secret", o["metadata"]["namespace"], "admin"), o) for o in live)
    assert client.calls == [("LIST", "Secret", None, "%s in (%s)" % (LABEL, ",".join("t%d" % i for i in range(5))))]


def test_an_object_the_selecting_list_misses_is_read_with_a_get():
    live = tenants(4)
    unlabelled = secret("admin", "openstack-t4")  # it exists, without the label its manifest sets
    client = StoreClient(live + [unlabelled])
    refs = [ref(o) for o in live] + [ref(unlabelled, **{LABEL: "t4"})]
    found = Reader(client).read(refs + [ref(secret("admin", "openstack-t9", **{LABEL: "t9"}))])
    assert found[("v1", "Secret", "openstack-t4", "admin")] is unlabelled
    assert found[("v1", "Secret", "openstack-t9", "admin")] is None
    assert sorted(c for c in client.calls if c[0] == "GET") == [
        ("GET", "Secret", "openstack-t4", "admin"), ("GET", "Secret", "openstack-t9", "admin")]


@pytest.mark.parametrize("status", [403, 400])
def test_a_refused_list_across_namespaces_falls_back_to_a_get_each(status):
    live = tenants(3)
    client = StoreClient(live, refuse_cluster_list=status)
    found = Reader(client).read([ref(o) for o in live])
    assert found == dict((("v1", "Secret", o["metadata"]["namespace"], "admin"), o) for o in live)
    assert sum(1 for c in client.calls if c[0] == "GET") == 3


def test_without_common_labels_or_below_the_threshold_each_object_is_a_get():
    live = tenants(3, labelled=False)
    client = StoreClient(live)
    Reader(client).read([ref(o) for o in live])
    assert [c[0] for c in client.calls] == ["GET"] * 3
    client = StoreClient(tenants(2))
    Reader(client).read([ref(o) for o in tenants(2)])
    assert [c[0] for c in client.calls] == ["GET"] * 2


def test_several_objects_of_one_namespace_come_from_one_list_and_absent_ones_are_none():
    live = [secret("a", "ns"), secret("b", "ns")]
    client = StoreClient(live)
    found = Reader(client).read([ref(o) for o in live] + [ref(secret("c", "ns"))])
    assert found[("v1", "Secret", "ns", "c")] is None and found[("v1", "Secret", "ns", "a")] is live[0]
    assert client.calls == [("LIST", "Secret", "ns", None)]


def test_cluster_scoped_kinds_have_no_namespace_in_their_keys_and_unknown_kinds_are_skipped_or_raised():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    unknown = {"apiVersion": "x/v1", "kind": "Thing", "name": "t", "namespace": "ns"}
    client = StoreClient([namespace])
    found = Reader(client, skip_unknown=True).read([dict(ref(namespace), namespace="ignored"), unknown])
    assert found == {("v1", "Namespace", None, "n"): namespace}
    with pytest.raises(KubeError):
        Reader(client).read([unknown])
    with pytest.raises(KubeError, match="Secret is namespaced: name the namespace of s"):
        Reader(client).read([{"apiVersion": "v1", "kind": "Secret", "name": "s"}])


def test_label_selector_keeps_only_keys_every_ref_carries():
    refs = [{"labels": {LABEL: "b", "x": "1"}}, {"labels": {LABEL: "a"}}, {"labels": {LABEL: "a", "x": "2"}}]
    assert label_selector(refs) == "%s in (a,b)" % LABEL
    assert label_selector(refs + [{"labels": {}}]) is None
    assert label_selector(refs + [{}]) is None


def test_many_objects_in_each_of_many_namespaces_come_from_one_list_across_them():
    live = [secret(name, "openstack-t%d" % i, **{LABEL: "t%d" % i}) for i in range(50) for name in ("a", "b", "c")]
    client = StoreClient(live)
    found = Reader(client).read([ref(o) for o in live])
    assert found == dict((("v1", "Secret", o["metadata"]["namespace"], o["metadata"]["name"]), o) for o in live)
    assert [c[:3] for c in client.calls] == [("LIST", "Secret", None)]


def test_what_the_list_across_namespaces_missed_comes_from_a_list_of_its_namespace_when_it_misses_several():
    live = [secret(name, ns, **{LABEL: ns}) for ns in ("t1", "t2") for name in ("a", "b")]
    unlabelled = [secret(name, "t3") for name in ("a", "b")]
    client = StoreClient(live + unlabelled)
    refs = [ref(o) for o in live] + [ref(o, **{LABEL: "t3"}) for o in unlabelled] + [ref(secret("c", "t3"), **{LABEL: "t3"})]
    found = Reader(client).read(refs)
    assert found[("v1", "Secret", "t3", "a")] is unlabelled[0] and found[("v1", "Secret", "t3", "c")] is None
    assert [c[:3] for c in client.calls] == [("LIST", "Secret", None), ("LIST", "Secret", "t3")]


class WidgetClient(StoreClient):
    KINDS = dict(list(StoreClient.KINDS.items()) + [(("test.example.com/v1", "Widget"), True)])


def widget(namespace, ready):
    return {"apiVersion": "test.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": namespace, "labels": {LABEL: namespace}},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_a_wait_reads_only_what_is_still_pending_each_round(monkeypatch):
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import poll as poll_module
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter
    names = ["t%d" % i for i in range(4)]
    client = WidgetClient([widget(ns, ns in ("t0", "t1")) for ns in names])
    rounds = []

    def sleep(seconds):  # between rounds: t2 becomes ready, then t3; t0 would turn unready but is not read again
        rounds.append(len(rounds))
        done = names[1 + len(rounds)]
        client.objects[("test.example.com/v1", "Widget", done, "w")] = widget(done, True)
        client.objects[("test.example.com/v1", "Widget", "t0", "w")] = widget("t0", False)

    monkeypatch.setattr(poll_module.time, "sleep", sleep)
    results = Waiter(client).wait([ref(widget(ns, False)) for ns in names], 60)
    assert [r["ready"] for r in results] == [True] * 4
    selectors = [c[3] for c in client.calls if c[0] == "LIST"]
    assert selectors == ["%s in (t0,t1,t2,t3)" % LABEL, "%s in (t2,t3)" % LABEL]
    assert [c[2:] for c in client.calls if c[0] == "GET"] == [("t3", "w")]


def test_a_wait_calls_its_repair_before_every_round(monkeypatch):
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import poll as poll_module
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter
    client = WidgetClient([widget("t0", False)])
    repairs = []

    def repair():  # the second round's repair makes the widget ready: the round after it reads it so
        repairs.append(len(repairs))
        if len(repairs) == 2:
            client.objects[("test.example.com/v1", "Widget", "t0", "w")] = widget("t0", True)

    monkeypatch.setattr(poll_module.time, "sleep", lambda seconds: None)
    results = Waiter(client).wait([ref(widget("t0", False))], 60, each_round=repair)
    assert [r["ready"] for r in results] == [True] and repairs == [0, 1]
