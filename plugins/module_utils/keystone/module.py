# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's Keystone modules.

Built on openstack.cloud's OpenStackModule (its auth options: cloud, auth,
region_name, interface, ...; check mode; results), plus what every Keystone step
of a CobaltCore region needs:

* Keystone down (connection refused, timeouts, 502/503/504) is retried with
  backoff, then fails naming the endpoint; refused credentials fail at once,
  naming the endpoint and the cloud;
* every module gets the collection's Kubernetes connection (the KubeConnection mixin):
  its client is built from ``kubeconfig`` and ``context`` (and the K8S_AUTH_* variables)
  only, never from openstack.cloud's ``validate_certs``, ``ca_cert``, ``client_cert``,
  ``client_key``, which are Keystone's;
* ``secret_auth`` authenticates with a password read from a Kubernetes Secret (the
  bootstrap admin's), so the password never passes through Ansible variables;
* secret values read or written are masked in everything Ansible prints.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import functools
import importlib
import time

from ansible_collections.openstack.cloud.plugins.module_utils import openstack as openstack_cloud
from ansible_collections.openstack.cloud.plugins.module_utils.openstack import OpenStackModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.secret_data import decoded
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.connection import KubeConnection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import MaskingAnsibleModule

try:
    from keystoneauth1 import exceptions as ksa_exceptions
    HAS_KEYSTONEAUTH = True
except ImportError:  # pragma: no cover - openstacksdk brings it
    ksa_exceptions = None
    HAS_KEYSTONEAUTH = False

TRANSIENT_STATUSES = (500, 502, 503, 504)
MAX_DELAY = 8.0

KEYSTONE_RETRY_SPEC = dict(
    connect_retries=dict(type="int", default=6),
    connect_retry_delay=dict(type="float", default=1.0),
)
SECRET_AUTH_SPEC = dict(
    secret_auth=dict(type="dict", no_log=False, options=dict(
        auth_url=dict(type="str", required=True),
        username=dict(type="str", default="admin"),
        project_name=dict(type="str", default="admin"),
        domain_name=dict(type="str", default="Default"),
        secret_namespace=dict(type="str", required=True, no_log=False),
        secret_name=dict(type="str", required=True, no_log=False),
        secret_key=dict(type="str", default="password", no_log=False),
    )),
)


class KeystoneError(Exception):
    """A Keystone failure with a message fit for the operator."""

    def __init__(self, message, **details):
        super(KeystoneError, self).__init__(message)
        self.details = details


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def http_status(exc):
    for item in _chain(exc):
        for attribute in ("http_status", "status_code"):
            value = getattr(item, attribute, None)
            if isinstance(value, int):
                return value
    return None


def is_unreachable(exc):
    """Connection refused, DNS, TLS or timeouts: Keystone (or the path to it) is down."""
    if ksa_exceptions is None:
        return False
    return any(isinstance(item, (ksa_exceptions.ConnectFailure, ksa_exceptions.ConnectTimeout,
                                 ksa_exceptions.UnknownConnectionError)) for item in _chain(exc))


def is_transient(exc):
    return is_unreachable(exc) or http_status(exc) in TRANSIENT_STATUSES


def retry(call, attempts, delay, describe_failure):
    """call() until it succeeds or fails for a reason that waiting cannot fix."""
    attempt = 0
    started = time.time()
    while True:
        attempt += 1
        try:
            return call()
        except Exception as exc:  # keystoneauth and the SDK raise many unrelated types
            if not is_transient(exc) or attempt >= attempts:
                raise KeystoneError(describe_failure(exc, attempt, time.time() - started), status=http_status(exc))
            time.sleep(min(delay * (2 ** (attempt - 1)), MAX_DELAY))


def short_error(exc):
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


class KeystoneModule(KubeConnection, OpenStackModule):
    """OpenStackModule with retries, clear Keystone errors and the collection's Kubernetes connection."""

    # The Kubernetes connection's options in a Keystone module: openstack.cloud owns the TLS options' names.
    kube_options = {"kubeconfig": "kubeconfig", "context": "context"}
    # openstack.cloud's auth is a no_log dict too: of it only passwords, tokens and secrets stay masked.
    narrowed_options = ("kubeconfig", "auth")

    def narrowed_strings(self, params):
        secret, public = super(KeystoneModule, self).narrowed_strings(params)
        auth_secret, auth_public = masking.auth_strings(params.get("auth"))
        return secret | auth_secret, (public | auth_public) - auth_secret

    def __init__(self):
        spec = dict(KEYSTONE_RETRY_SPEC)
        spec.update(self.kube_connection_spec())
        spec.update(SECRET_AUTH_SPEC)
        spec.update(self.argument_spec)
        self.argument_spec = spec
        self.module_kwargs = dict(self.module_kwargs, mutually_exclusive=[("secret_auth", "cloud"), ("secret_auth", "auth")])
        self.diff = False
        # OpenStackModule builds its AnsibleModule itself: let it build one that masks before validating
        # (and unmasks a kubeconfig's names, so a failed validation's message stays readable).
        builder = openstack_cloud.AnsibleModule
        openstack_cloud.AnsibleModule = functools.partial(MaskingAnsibleModule, secrets=self.argument_secrets,
                                                          public=self.unmaskable)
        try:
            super(KeystoneModule, self).__init__()
        finally:
            openstack_cloud.AnsibleModule = builder
        self.diff = self.ansible._diff
        self.cloud_name = self.conn.config.name if getattr(self.conn, "config", None) else None

    def openstack_cloud_from_module(self):
        self.ansible.settle_masks()  # before secret_auth masks the password it reads
        settings = self.params.get("secret_auth")
        if not settings:
            return super(KeystoneModule, self).openstack_cloud_from_module()
        self.params.pop("cloud", None)
        try:
            sdk = importlib.import_module("openstack")
        except ImportError:
            self.fail_json(msg="openstacksdk is required for this module")
        password = self.secret_password(settings)
        try:
            return sdk, sdk.connect(
                auth_type="password",
                auth=dict(auth_url=settings["auth_url"], username=settings["username"], password=password,
                          project_name=settings["project_name"], user_domain_name=settings["domain_name"],
                          project_domain_name=settings["domain_name"]),
                region_name=self.params["region_name"], verify=self.params["validate_certs"],
                cacert=self.params["ca_cert"], api_timeout=self.params["api_timeout"],
                interface=self.params["interface"])
        except sdk.exceptions.SDKException as exc:
            self.fail_json(msg=str(exc))

    def secret_password(self, settings):
        """The password of secret_auth, read from its Secret and masked from here on."""
        where = "Secret %s/%s" % (settings["secret_namespace"], settings["secret_name"])
        try:
            live = self.read_secret(settings["secret_namespace"], settings["secret_name"])
        except KubeError as exc:
            self.fail_json(msg="secret_auth: reading %s failed: %s" % (where, exc))
        password = decoded(live).get(settings["secret_key"])
        if not password:
            self.fail_json(msg="secret_auth: %s %s" % (where, "does not exist" if live is None else
                                                       "has no usable key %s" % settings["secret_key"]))
        return password

    def read_secret(self, namespace, name):
        """A Secret (None when absent) whose values are masked from here on."""
        live = self.client.get(self.client.resource("v1", "Secret"), name, namespace)
        self.hide_secret_values([live] if live else [])
        return live

    # -- Keystone ------------------------------------------------------------

    @property
    def auth_url(self):
        if self.params.get("secret_auth"):
            return self.params["secret_auth"]["auth_url"]
        try:
            return self.conn.config.get_auth_args().get("auth_url") or "(no auth_url)"
        except Exception:  # a broken cloud config is reported by authorize()
            return "(unknown auth_url)"

    def _where(self):
        if self.params.get("secret_auth"):
            settings = self.params["secret_auth"]
            return "Keystone at %s (user %s, password from Secret %s/%s)" % (
                self.auth_url, settings["username"], settings["secret_namespace"], settings["secret_name"])
        cloud = " (cloud %s)" % self.cloud_name if self.cloud_name and self.cloud_name != "defaults" else ""
        return "Keystone at %s%s" % (self.auth_url, cloud)

    def keystone_failure(self, action):
        def describe_failure(exc, attempts, elapsed):
            status = http_status(exc)
            if is_unreachable(exc) or status in TRANSIENT_STATUSES:
                return "%s is not reachable: %s failed %d times in %.0fs: %s" % (
                    self._where(), action, attempts, elapsed, short_error(exc))
            if status == 401:
                return "%s refused the credentials (HTTP 401): check the password or application credential: %s" % (
                    self._where(), short_error(exc))
            if status == 403:
                return "%s forbade %s (HTTP 403): the credentials lack the admin role? %s" % (
                    self._where(), action, short_error(exc))
            return "%s: %s failed: %s" % (self._where(), action, short_error(exc))
        return describe_failure

    def keystone(self, call, action):
        """One Keystone call with the module's retry policy and error messages."""
        return retry(call, self.params["connect_retries"], self.params["connect_retry_delay"],
                     self.keystone_failure(action))

    def credential_access(self, auth_url, credential_id, secret, action):
        """The AccessInfo an application credential gets (Keystone's own check), with the retry policy."""
        from keystoneauth1 import session
        from keystoneauth1.identity import v3
        auth = v3.ApplicationCredential(auth_url=auth_url, application_credential_id=credential_id,
                                        application_credential_secret=secret)
        sess = session.Session(auth=auth, verify=self.conn.session.verify, cert=self.conn.session.cert)
        return self.keystone(lambda: auth.get_access(sess), action)

    def authorize(self):
        """A token for the admin cloud: fails clearly when Keystone is down or refuses the credentials."""
        return self.keystone(self.conn.authorize, "authentication")

    # -- running ---------------------------------------------------------------

    def fail_with(self, msg, **extra):
        result = dict(self.results)
        result.update(extra)
        self.ansible.fail_json(msg=msg, **self._with_requests(result))

    def __call__(self):
        try:
            self.run()
        except KeystoneError as exc:
            self.fail_with(str(exc), **exc.details)
        except InputError as exc:
            self.fail_with("invalid input, nothing was changed: %s" % exc, problems=exc.problems)
        except KubeError as exc:
            self.fail_with(str(exc), error=exc.as_dict())
        except self.sdk.exceptions.SDKException as exc:
            self.fail_with("%s: %s" % (self._where(), short_error(exc)))
        self.ansible.exit_json(**self._with_requests(self.results))
