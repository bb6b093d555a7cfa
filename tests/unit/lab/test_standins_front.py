# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Gardener front's pass-through: an upstream connection that cannot take a request is replaced."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import http.client
import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import front  # noqa: E402  pylint: disable=wrong-import-position


class Connection:
    """An upstream HTTPSConnection: a stuck one raises what http.client raises while a response is unread."""

    made = []

    def __init__(self, host, port, context=None, timeout=None):
        self.stuck = not Connection.made  # the first one is the connection left mid-exchange
        self.closed = False
        self.sent = []
        Connection.made.append(self)

    def putrequest(self, method, url, **unused):
        if self.stuck:
            raise http.client.CannotSendRequest("Request-sent")
        self.sent.append((method, url))

    def putheader(self, key, value):
        pass

    def endheaders(self, body=None):
        pass

    def getresponse(self):
        return "response"

    def close(self):
        self.closed = True


class Request:
    """What _send_upstream reads of a request handler."""

    command, path = "GET", "/api"
    server = type("Server", (), {"upstream_port": 26410, "upstream_context": None})()
    upstream = None

    def upstream_headers(self, who):
        return [("Impersonate-User", who["user"])]


def test_a_connection_left_mid_exchange_is_replaced(monkeypatch):
    Connection.made = []
    monkeypatch.setattr(http.client, "HTTPSConnection", Connection)
    request = Request()
    assert front.Handler._send_upstream(request, None, {"user": "u"}) == "response"  # pylint: disable=protected-access
    stuck, fresh = Connection.made
    assert stuck.closed and fresh.sent == [("GET", "/api")] and request.upstream is fresh
