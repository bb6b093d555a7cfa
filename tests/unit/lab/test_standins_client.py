# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins' client reads a watched collection from the API server only when it may have changed."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import sys
import threading
from types import SimpleNamespace

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import client  # noqa: E402  pylint: disable=wrong-import-position

SERVER = "https://127.0.0.1:1"
OTHER = "https://127.0.0.1:2"
PODS = "/api/v1/pods"


class Response:
    def __init__(self, status, body):
        self.status_code = status
        self.content = json.dumps(body).encode()

    def json(self):
        return json.loads(self.content)


class Session:
    """Answers GETs with the current items and counts every request."""

    def __init__(self):
        self.items = [{"metadata": {"name": "a"}}]
        self.requests = []
        self.during_get = None

    def request(self, method, url, **_kwargs):
        self.requests.append((method, url))
        if method == "GET":
            if self.during_get:
                self.during_get()
            if url.endswith("/missing"):
                return Response(404, {"kind": "Status", "message": "not found"})
            return Response(200, {"items": [dict(i) for i in self.items]})
        return Response(200, {"metadata": {"name": "a"}})


@pytest.fixture(name="session")
def _session(monkeypatch):
    session = Session()
    monkeypatch.setattr(client.kube, "_session", lambda cluster: session)
    monkeypatch.setattr(client, "_COLLECTIONS", {})
    monkeypatch.setattr(client, "_WRITES", {})
    return session


def kube(server=SERVER):
    return client.Kube(SimpleNamespace(server=server), "test")


def gets(session):
    return [r for r in session.requests if r[0] == "GET"]


def watched(server=SERVER, path=PODS):
    collection = client.collection(server, path)
    collection.changed(True)  # the watch is open
    return collection


def test_an_unchanged_watched_collection_is_read_once_and_each_caller_gets_its_own_objects(session):
    watched()
    k = kube()
    first = k.list(PODS)
    first[0]["metadata"]["name"] = "changed by the caller"
    assert k.list(PODS) == [{"metadata": {"name": "a"}}]
    assert len(gets(session)) == 1


def test_an_event_makes_the_next_read_ask_the_api_server(session):
    collection = watched()
    k = kube()
    k.list(PODS)
    session.items = [{"metadata": {"name": "b"}}]
    collection.changed(True)
    assert k.list(PODS) == [{"metadata": {"name": "b"}}]
    assert len(gets(session)) == 2


def test_a_write_to_the_resource_on_that_api_server_by_any_client_makes_the_next_read_ask(session):
    watched()
    watched(OTHER)
    reader, writer = kube(), kube()
    reader.list(PODS)
    kube(OTHER).list(PODS)
    writer.patch("/api/v1/namespaces/x/pods/a", {"metadata": {"resourceVersion": "1"}}, {"status": {}},
                 subresource="status")
    reader.list(PODS)
    kube(OTHER).list(PODS)
    assert gets(session) == [("GET", SERVER + PODS), ("GET", OTHER + PODS), ("GET", SERVER + PODS)]


def test_a_write_to_another_resource_keeps_the_answer(session):
    watched()
    k = kube()
    k.list(PODS)
    k.create("/api/v1/namespaces/x/secrets", {"metadata": {"name": "s"}})
    k.patch("/api/v1/namespaces/x", {"metadata": {"resourceVersion": "1"}}, {"metadata": {"labels": {}}})
    k.list(PODS)
    assert gets(session) == [("GET", SERVER + PODS)]


@pytest.mark.parametrize("url_path, resource", [
    ("/api/v1/pods", ("", "pods")),
    ("/api/v1/namespaces/x/pods/a/status", ("", "pods")),
    ("/api/v1/namespaces", ("", "namespaces")),
    ("/api/v1/namespaces/x", ("", "namespaces")),
    ("/api/v1/namespaces/x/finalize", ("", "namespaces")),
    ("/apis/c5c3.io/v1alpha1/controlplanes", ("c5c3.io", "controlplanes")),
    ("/apis/c5c3.io/v1beta1/namespaces/x/controlplanes/y/status?x=1", ("c5c3.io", "controlplanes")),
    ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/y", ("apiextensions.k8s.io", "customresourcedefinitions")),
])
def test_a_path_names_its_resource_whatever_its_version_and_namespace(url_path, resource):
    assert client.resource_of(url_path) == resource


def test_nothing_is_kept_while_the_watch_is_not_open(session):
    collection = watched()
    collection.changed(False)
    k = kube()
    k.list(PODS)
    k.list(PODS)
    assert len(gets(session)) == 2


@pytest.mark.parametrize("read, key", [("list", None), ("get", ("x", "a"))])
def test_an_event_during_the_read_of_a_collection_or_an_object_keeps_nothing(session, read, key):
    collection = watched()
    session.during_get = lambda: collection.changed(True, key)
    k = kube()
    url_path = PODS if read == "list" else POD
    getattr(k, read)(url_path)
    session.during_get = None
    getattr(k, read)(url_path)
    getattr(k, read)(url_path)
    assert len(gets(session)) == 2


def test_an_unwatched_collection_and_a_read_with_parameters_always_ask(session):
    watched()
    k = kube()
    k.list("/api/v1/secrets")
    k.list("/api/v1/secrets")
    k.request("GET", PODS, params={"limit": "1"})
    k.request("GET", PODS, params={"limit": "1"})
    assert len(gets(session)) == 4


def test_an_error_is_not_kept(session):
    watched()

    def initializing(method, url, **_kwargs):
        session.requests.append((method, url))
        return Response(503, {"message": "initializing"})

    session.request = initializing
    k = kube()
    for attempt in (1, 2):
        with pytest.raises(client.ApiError):
            k.get(PODS)
        assert len(gets(session)) == attempt


def test_counts_are_safe_across_threads(session):
    collection = watched()

    def events():
        for _event in range(1000):
            collection.changed(True)

    threads = [threading.Thread(target=events) for _thread in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert collection.events == 4001
    assert len(gets(session)) == 0


POD = "/api/v1/namespaces/x/pods/a"


def test_an_unchanged_object_of_a_watched_collection_is_read_once_found_or_not(session):
    watched()
    k = kube()
    assert k.get(POD) == k.get(POD)
    assert k.get("/api/v1/namespaces/x/pods/missing") is None
    assert k.get("/api/v1/namespaces/x/pods/missing") is None
    assert gets(session) == [("GET", SERVER + POD), ("GET", SERVER + "/api/v1/namespaces/x/pods/missing")]


def test_an_event_of_the_object_a_closed_watch_or_a_write_makes_the_next_read_of_it_ask(session):
    collection = watched()
    k = kube()
    k.get(POD)
    collection.changed(True, ("x", "b"))  # another object
    k.get(POD)
    collection.changed(True, ("x", "a"))
    k.get(POD)
    collection.changed(False)
    collection.changed(True)  # reopened: what happened in between was not seen
    k.get(POD)
    k.get(POD)
    k.patch(POD, {"metadata": {"resourceVersion": "1"}}, {"status": {}}, subresource="status")
    k.get(POD)
    assert len(gets(session)) == 4
    assert k.get("/api/v1/namespaces/x/secrets/s") and k.get("/api/v1/namespaces/x/secrets/s")  # not watched
    assert len(gets(session)) == 6


@pytest.mark.parametrize("url_path, found", [
    ("/api/v1/namespaces/x/secrets/y", ("/api/v1/secrets", ("x", "y"))),
    ("/apis/c5c3.io/v1alpha1/namespaces/x/controlplanes/cp", ("/apis/c5c3.io/v1alpha1/controlplanes", ("x", "cp"))),
    ("/api/v1/namespaces/x", ("/api/v1/namespaces", (None, "x"))),
    ("/apis/ceph.rook.io/v1/cephclusters", None),
    ("/api/v1/namespaces/x/secrets", None),
    ("/api/v1/namespaces/x/pods/a/status", None),
])
def test_object_of_names_the_watched_collection_and_the_key_of_an_object_path(url_path, found):
    assert client.object_of(url_path) == found


def test_watch_events_name_their_object_and_whether_it_is_gone():
    event = {"type": "DELETED", "object": {"metadata": {"namespace": "x", "name": "a"}}}
    assert client._event_key(json.dumps(event).encode()) == ("x", "a", True)  # pylint: disable=protected-access
    assert client._event_key(b'{"type": "ERROR", "object": {"kind": "Status"}}') is None  # pylint: disable=protected-access
