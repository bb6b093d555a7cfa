# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A BMC's Redfish login, tried as metal-operator tries it: HTTP Basic authentication on a resource below the
service root (the service root itself answers without credentials, as the Redfish specification asks)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.urls import open_url
from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError

# The collection of ComputerSystems: metal-operator reads it first when it discovers a BMC's servers.
SYSTEMS = "/redfish/v1/Systems"
TIMEOUT = 10
PARALLEL = 8


def systems_url(scheme, ip, port):
    """The BMC's Redfish systems URL; without a port, the scheme's (metal-operator joins address and port)."""
    host = "[%s]" % ip if ":" in ip else ip
    port = port or (443 if scheme == "https" else 80)
    return "%s://%s:%d%s" % (scheme, host, port, SYSTEMS)


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
