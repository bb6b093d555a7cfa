# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ironcore_bmc_credentials against fake BMCs over HTTP (Basic authentication and an AccountService, as the Redfish
mock metal-operator v0.7.0 ships) and a fake IronCore cluster: a client that reads the BMCSecret for every request is
never refused, whatever the step, and an interrupted rotation goes on from its step."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import re
import threading

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import redfish
from ansible_collections.c5c3.cobaltcore.plugins.modules import ironcore_bmc_credentials

from module_harness import IRONCORE, assert_hidden, kube, kubeconfig, run_module  # noqa: F401  # pylint: disable=unused-import
from tls_servers import API

OLD, NEW, NEWER = "old-password-never-shown", "new-password-never-shown", "newer-password-never-shown"
MEMBER = re.compile(r"^/redfish/v1/AccountService/Accounts/(\d+)$")


class FakeBMC(API):
    """Accounts by Id; every request but the service root needs a Basic login of an enabled account. like_the_mock:
    as metal-operator v0.7.0's Redfish mock (the lab's BMCs), a deleted account that was created by a POST is deleted
    but answered with 404 and stays listed in the collection."""

    def __init__(self, users, host, max_length=30, like_the_mock=False):
        super(FakeBMC, self).__init__(host=host)
        self.like_the_mock, self.listed = like_the_mock, set()
        self.accounts = dict((str(i + 1), {"UserName": u, "Password": p, "RoleId": "Administrator", "Enabled": True})
                             for i, (u, p) in enumerate(users))
        self.max_length = max_length
        self.mutex = threading.Lock()

    def accepts(self, username, password):
        return any(a["UserName"] == username and a["Password"] == password and a["Enabled"]
                   for a in self.accounts.values())

    def answer(self, seen):
        with self.mutex:
            self.seen.append(seen)
            auth = seen["headers"].get("Authorization") or ""
            login = base64.b64decode(auth[6:]).decode().split(":", 1) if auth.startswith("Basic ") else ["", ""]
            if not self.accepts(*login):
                return 401, {"error": "unauthorized"}, None
            path, method = seen["path"].split("?")[0], seen["method"]
            body = json.loads(seen["body"] or b"{}")
            if path == redfish.SYSTEMS:
                return 200, {"Members": []}, None
            if path == redfish.ACCOUNT_SERVICE:
                return 200, {"MaxPasswordLength": self.max_length, "MinPasswordLength": 8,
                             "Accounts": {"@odata.id": redfish.ACCOUNT_SERVICE + "/Accounts"}}, None
            if path == redfish.ACCOUNT_SERVICE + "/Accounts" and method == "GET":
                return 200, {"Members": [{"@odata.id": "%s/Accounts/%s" % (redfish.ACCOUNT_SERVICE, i)}
                                         for i in sorted(set(self.accounts) | self.listed)]}, None
            if path == redfish.ACCOUNT_SERVICE + "/Accounts" and method == "POST":
                new = str(max(int(i) for i in set(self.accounts) | self.listed) + 1)
                self.accounts[new] = dict(body, Enabled=body.get("Enabled", True), created=True)
                return 201, {}, None
            found = MEMBER.match(path)
            if not found or found.group(1) not in self.accounts:
                return 404, {}, None
            account = self.accounts[found.group(1)]
            if method == "GET":
                shown = dict((k, v) for k, v in account.items() if k not in ("Password", "created"))
                shown.update({"@odata.id": path, "Id": found.group(1)})
                return 200, shown, None
            if method == "PATCH":
                account.update(body)
                return 200, {}, None
            if method == "DELETE":
                deleted = self.accounts.pop(found.group(1))
                if self.like_the_mock and deleted.get("created"):
                    self.listed.add(found.group(1))
                    return 404, {}, None
                return 204, None, None
            return 405, {}, None

    def users(self):
        return sorted(a["UserName"] for a in self.accounts.values())


@pytest.fixture
def bmcs(kube):
    found = [FakeBMC([("admin", OLD), ("other", "other-password")], "127.0.0.%d" % (i + 1), like_the_mock=i == 1)
             for i in range(2)]
    kube.add({"apiVersion": IRONCORE, "kind": "BMCSecret", "metadata": {"name": "bmc-rack"},
              "data": {"username": base64.b64encode(b"admin").decode(), "password": base64.b64encode(OLD.encode()).decode()}})
    try:
        yield found
    finally:
        for bmc in found:
            bmc.stop()


def args(bmcs, password=NEW, **extra):
    entries = [{"name": "bmc-%d" % i, "mac_address": "52:54:00:00:00:0%d" % i, "ip": "127.0.0.%d" % (i + 1),
                "port": int(bmc.url.rsplit(":", 1)[1]), "scheme": "http", "secret": "bmc-rack"}
               for i, bmc in enumerate(bmcs)]
    secrets = [{"name": "bmc-rack", "username": "admin", "password": password}]
    return dict({"kubeconfig": kubeconfig(), "bmcs": entries, "secrets": secrets, "grace": 0}, **extra)


def stored(kube):
    secret = kube.find(IRONCORE, "BMCSecret", "bmc-rack")
    return tuple(base64.b64decode(secret["data"][k]).decode() for k in ("username", "password"))


class Consumer(threading.Thread):
    """metal-operator: the BMCSecret read for every request to each BMC."""

    def __init__(self, kube, bmcs):
        super(Consumer, self).__init__(daemon=True)
        self.kube, self.bmcs, self.requests, self.refused = kube, bmcs, 0, []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            for bmc in self.bmcs:
                problem = redfish.login_problem(bmc.url + redfish.SYSTEMS, *stored(self.kube))
                self.requests += 1
                if problem:
                    self.refused.append(problem)


def test_a_rotation_never_refuses_a_consumer_and_leaves_only_the_new_password(kube, bmcs):
    consumer = Consumer(kube, bmcs)
    consumer.start()
    try:
        result, text = run_module(ironcore_bmc_credentials.main, args(bmcs, grace=1))
    finally:
        consumer.stop.set()
        consumer.join()
    assert result["changed"] and result["secrets"] == [{"name": "bmc-rack", "steps": ["start", "switch-back", "finish"],
                                                        "bmcs": ["bmc-0", "bmc-1"],
                                                        "handover_deleted": ["bmc-0", "bmc-1"], "changed": True}]
    assert consumer.requests > 10 and consumer.refused == []
    assert stored(kube) == ("admin", NEW)
    for bmc in bmcs:
        assert bmc.accepts("admin", NEW) and not bmc.accepts("admin", OLD)
        assert bmc.users() == ["admin", "other"]  # the handover account is gone, the other untouched
    assert_hidden(text, OLD, NEW)
    result, text = run_module(ironcore_bmc_credentials.main, args(bmcs))
    assert not result["changed"] and result["secrets"][0]["steps"] == ["finish"]
    assert not [s for b in bmcs for s in b.seen if s["method"] in ("POST", "PATCH", "DELETE")][6:]


def test_an_interrupted_rotation_goes_on_from_the_handover(kube, bmcs):
    # As a run killed after the switch to the handover account left it.
    for bmc in bmcs:
        bmc.accounts["9"] = {"UserName": "c5c3-handover", "Password": NEW, "RoleId": "Administrator", "Enabled": True}
    kube.find(IRONCORE, "BMCSecret", "bmc-rack")["data"] = {
        "username": base64.b64encode(b"c5c3-handover").decode(), "password": base64.b64encode(NEW.encode()).decode()}
    result, unused = run_module(ironcore_bmc_credentials.main, args(bmcs), check_mode=True)
    assert result["secrets"][0]["steps"] == ["switch-back"] and stored(kube)[0] == "c5c3-handover"
    assert all(b.accepts("admin", OLD) for b in bmcs)
    result, unused = run_module(ironcore_bmc_credentials.main, args(bmcs))
    assert result["changed"] and result["secrets"][0]["steps"] == ["switch-back", "finish"]
    assert stored(kube) == ("admin", NEW) and all(b.users() == ["admin", "other"] for b in bmcs)


def test_a_password_a_bmc_would_not_take_is_refused_before_any_write(kube, bmcs):
    bmcs[1].max_length = 12
    result, unused = run_module(ironcore_bmc_credentials.main, args(bmcs))
    assert result["failed"] and "BMC bmc-1 with BMCSecret bmc-rack takes passwords of at most 12 characters" in \
        result["msg"] and "bmc-0" not in result["msg"]
    assert stored(kube) == ("admin", OLD)
    assert not [s for b in bmcs for s in b.seen if s["method"] != "GET"]


def test_a_secret_the_bmcs_refuse_or_of_another_user_is_refused_naming_each(kube, bmcs):
    bmcs[0].accounts["1"]["Password"] = "changed-by-hand"
    result, unused = run_module(ironcore_bmc_credentials.main, args(bmcs))
    assert result["failed"] and "BMC bmc-0 with BMCSecret bmc-rack refuses the BMCSecret's login" in result["msg"]
    assert "bmc-1" not in result["msg"] and stored(kube) == ("admin", OLD)
    entries = args(bmcs)
    entries["secrets"][0]["username"] = "root"
    result, unused = run_module(ironcore_bmc_credentials.main, entries)
    assert result["failed"] and "holds user 'admin', the inventory names 'root'" in result["msg"]
    assert not [s for b in bmcs for s in b.seen if s["method"] != "GET"]


def test_check_mode_reports_the_next_step_and_writes_nothing(kube, bmcs):
    result, text = run_module(ironcore_bmc_credentials.main, args(bmcs, password=NEWER), check_mode=True)
    assert result["secrets"][0]["steps"] == ["start"] and stored(kube) == ("admin", OLD)
    assert not [s for b in bmcs for s in b.seen if s["method"] != "GET"]
    assert_hidden(text, OLD, NEWER)
