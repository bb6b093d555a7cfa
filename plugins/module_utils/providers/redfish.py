# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A BMC's Redfish login, tried as metal-operator tries it: HTTP Basic authentication on a resource below the
service root (the service root itself answers without credentials, as the Redfish specification asks); and its
AccountService's accounts (list, create, set a password, delete), as metal-operator's BMCUser controller manages
them (bmc/redfish.go: POST to the Accounts collection, PATCH of a member's Password, DELETE of a member)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError

# The collection of ComputerSystems: metal-operator reads it first when it discovers a BMC's servers.
SYSTEMS = "/redfish/v1/Systems"
TIMEOUT = 10
PARALLEL = 8


ACCOUNT_SERVICE = "/redfish/v1/AccountService"


def base_url(scheme, ip, port):
    """The BMC's Redfish address; without a port, the scheme's (metal-operator joins address and port)."""
    host = "[%s]" % ip if ":" in ip else ip
    port = port or (443 if scheme == "https" else 80)
    return "%s://%s:%d" % (scheme, host, port)


def systems_url(scheme, ip, port):
    """The BMC's Redfish systems URL."""
    return base_url(scheme, ip, port) + SYSTEMS


def open_url(url, **options):
    """ansible.module_utils.urls.open_url, imported by the first request: with cryptography it costs ~0.1 s, which
    the filters and modules that only build a BMC's URLs (ironcore) need not pay."""
    from ansible.module_utils import urls
    return urls.open_url(url, **options)


def login_problem(url, username, password, validate_certs=True, timeout=TIMEOUT):
    """Why the BMC at url refuses or cannot take the login, None when it accepts it."""
    try:
        open_url(url, method="GET", url_username=username, url_password=password, force_basic_auth=True,
                 validate_certs=validate_certs, timeout=timeout, use_proxy=False,
                 headers={"Accept": "application/json"}).read()
    except HTTPError as exc:
        if exc.code in (401, 403):
            return "refuses the credentials (HTTP %d from %s)" % (exc.code, url)
        return "answers HTTP %d at %s" % (exc.code, url)
    except (URLError, OSError, ValueError) as exc:
        return "cannot be reached at %s: %s" % (url, getattr(exc, "reason", exc))
    return None


def login_problems(logins, validate_certs=True, timeout=TIMEOUT):
    """{name: problem} of every (name, url, username, password) login that fails, tried in parallel."""
    logins = list(logins)
    if not logins:
        return {}
    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(logins))) as pool:
        found = pool.map(lambda login: (login[0], login_problem(*login[1:], validate_certs=validate_certs,
                                                                timeout=timeout)), logins)
        return dict((name, problem) for name, problem in found if problem)


class RedfishError(Exception):
    """A Redfish request that failed: the HTTP status (None when the BMC was not reached) and why."""

    def __init__(self, code, message):
        super(RedfishError, self).__init__(message)
        self.code = code


class Session(object):
    """Requests to one BMC with one login (HTTP Basic, as metal-operator sends them)."""

    def __init__(self, base, username, password, validate_certs=True, timeout=TIMEOUT):
        self.base, self.username, self.password = base, username, password
        self.validate_certs, self.timeout = validate_certs, timeout

    def request(self, method, path, body=None):
        """The parsed JSON answer ({} when there is none), or RedfishError."""
        url = path if path.startswith("http") else self.base + path
        try:
            response = open_url(url, method=method, data=None if body is None else json.dumps(body),
                                url_username=self.username, url_password=self.password, force_basic_auth=True,
                                validate_certs=self.validate_certs, timeout=self.timeout, use_proxy=False,
                                headers={"Accept": "application/json", "Content-Type": "application/json"})
            text = response.read()
        except HTTPError as exc:
            raise RedfishError(exc.code, "%s %s: HTTP %d" % (method, url, exc.code))
        except (URLError, OSError, ValueError) as exc:
            raise RedfishError(None, "%s %s: %s" % (method, url, getattr(exc, "reason", exc)))
        try:
            return json.loads(text) if text and text.strip() else {}
        except ValueError:
            return {}

    def account_service(self):
        return self.request("GET", ACCOUNT_SERVICE)

    def accounts(self):
        """Every account of the BMC: the members of the AccountService's Accounts collection (slots without a
        UserName are empty)."""
        collection = (self.account_service().get("Accounts") or {}).get("@odata.id") or ACCOUNT_SERVICE + "/Accounts"
        found = []
        for member in self.request("GET", collection).get("Members") or []:
            try:
                found.append(self.request("GET", member["@odata.id"]))
            except RedfishError as exc:
                if exc.code != 404:  # deleted since the collection was read (or listed after its deletion)
                    raise
        return collection, [account for account in found if account.get("UserName")]

    def create_account(self, collection, username, password, role):
        self.request("POST", collection, {"UserName": username, "Password": password, "RoleId": role,
                                          "Enabled": True})

    def set_password(self, account, password):
        self.request("PATCH", account["@odata.id"], {"Password": password})

    def delete_account(self, account):
        """DELETE of the member; a BMC with fixed slots (405) empties the slot instead, and 404 is gone already, as
        metal-operator takes them."""
        try:
            self.request("DELETE", account["@odata.id"])
        except RedfishError as exc:
            if exc.code == 404:
                return
            if exc.code != 405:
                raise
            self.request("PATCH", account["@odata.id"], {"UserName": "", "Enabled": False})


def find_account(accounts, username):
    return next((a for a in accounts if a.get("UserName") == username), None)
