# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A BMC's Redfish login tried before the BMC objects are written, against a local HTTP server that plays the
BMC: /redfish/v1/Systems answers 200 only with the right Basic authentication."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import socket

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import redfish

from tls_servers import API

RIGHT = ("admin", "s3cret-pass")
SYSTEMS = {"@odata.id": redfish.SYSTEMS, "Members": [{"@odata.id": redfish.SYSTEMS + "/1"}]}


def basic(username, password):
    return "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()


def systems(seen):
    if seen["headers"].get("Authorization") == basic(*RIGHT):
        return 200, SYSTEMS
    return 401, {"error": {"code": "Base.1.0.GeneralError"}}, {"WWW-Authenticate": 'Basic realm="redfish"'}


@pytest.fixture
def bmc():
    api = API()
    api.route("GET", redfish.SYSTEMS, systems)
    api.route("GET", "/broken" + redfish.SYSTEMS, (500, {"error": "internal"}))
    try:
        yield api
    finally:
        api.stop()


def closed_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_systems_url_takes_the_schemes_port_unless_one_is_given():
    assert redfish.systems_url("http", "10.0.0.1", None) == "http://10.0.0.1:80/redfish/v1/Systems"
    assert redfish.systems_url("https", "10.0.0.1", None) == "https://10.0.0.1:443/redfish/v1/Systems"
    assert redfish.systems_url("https", "10.0.0.1", 8443) == "https://10.0.0.1:8443/redfish/v1/Systems"
    assert redfish.systems_url("http", "bmc-1.example.com", 8000) == "http://bmc-1.example.com:8000/redfish/v1/Systems"
    assert redfish.systems_url("https", "fd00::1", None) == "https://[fd00::1]:443/redfish/v1/Systems"
    assert redfish.systems_url("http", "fd00::1", 8000) == "http://[fd00::1]:8000/redfish/v1/Systems"


def test_the_right_login_has_no_problem(bmc):
    assert redfish.login_problem(bmc.url + redfish.SYSTEMS, *RIGHT) is None
    (seen,) = bmc.seen
    assert seen["headers"]["Authorization"] == basic(*RIGHT)  # sent at once, not after a challenge


def test_a_wrong_login_is_refused(bmc):
    url = bmc.url + redfish.SYSTEMS
    assert redfish.login_problem(url, "admin", "wrong") == "refuses the credentials (HTTP 401 from %s)" % url
    problem = redfish.login_problem(url, "root", RIGHT[1])
    assert problem.startswith("refuses the credentials (HTTP 401 ") and RIGHT[1] not in problem


def test_another_error_is_reported_with_its_status(bmc):
    url = bmc.url + "/broken" + redfish.SYSTEMS
    assert redfish.login_problem(url, *RIGHT) == "answers HTTP 500 at %s" % url


def test_a_bmc_that_does_not_answer_cannot_be_reached():
    url = redfish.systems_url("http", "127.0.0.1", closed_port())
    problem = redfish.login_problem(url, *RIGHT, timeout=5)
    assert problem.startswith("cannot be reached at %s: " % url)


def test_login_problems_names_only_the_failing_bmcs(bmc):
    url = bmc.url + redfish.SYSTEMS
    dead = redfish.systems_url("http", "127.0.0.1", closed_port())
    logins = [("bmc-%d" % i, url) + RIGHT for i in range(10)]
    logins += [("bmc-wrong", url, "admin", "wrong"), ("bmc-dead", dead) + RIGHT]
    problems = redfish.login_problems(iter(logins), timeout=5)  # any iterable, tried in parallel
    assert sorted(problems) == ["bmc-dead", "bmc-wrong"]
    assert problems["bmc-wrong"].startswith("refuses the credentials (HTTP 401 ")
    assert problems["bmc-dead"].startswith("cannot be reached at ")
    assert bmc.count("GET", redfish.SYSTEMS) == 11
    assert redfish.login_problems([]) == {}
