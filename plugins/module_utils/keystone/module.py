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
* ``clusters`` runs the module for many OpenStack clusters in one process: each entry
  names a cluster, its own ``secret_auth`` and its values of the module's options; all
  entries are validated before the first one runs, they run side by side, each with its
  own Keystone connection, and every cluster's failure is reported together, naming it;
* secret values read or written are masked in everything Ansible prints.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import functools
import importlib
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

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

try:
    # openstacksdk with the module, not first in OpenStackModule's constructor: the action plugin imports the module
    # in ansible-playbook's own process, so each task's forked worker finds the SDK imported instead of importing it
    # again (plugin_utils/in_process.py). openstack.cloud imports it by name, as here.
    importlib.import_module("openstack")
except ImportError:  # pragma: no cover - OpenStackModule reports the missing SDK
    pass

TRANSIENT_STATUSES = (500, 502, 503, 504)
MAX_DELAY = 8.0

KEYSTONE_RETRY_SPEC = dict(
    connect_retries=dict(type="int", default=6),
    connect_retry_delay=dict(type="float", default=1.0),
)
# openstack.cloud's cloud (raw) is a cloud's name or its settings with their auth: no_log, narrowed to the auth's credentials.
CLOUD_SPEC = dict(
    cloud=dict(type="raw", no_log=True),
)
SECRET_AUTH_OPTIONS = dict(
    auth_url=dict(type="str", required=True),
    username=dict(type="str", default="admin"),
    project_name=dict(type="str", default="admin"),
    domain_name=dict(type="str", default="Default"),
    secret_namespace=dict(type="str", required=True, no_log=False),
    secret_name=dict(type="str", required=True, no_log=False),
    secret_key=dict(type="str", default="password", no_log=False),
    interface=dict(type="str", choices=["public", "internal", "admin"]),
)
SECRET_AUTH_SPEC = dict(
    secret_auth=dict(type="dict", no_log=False, options=copy.deepcopy(SECRET_AUTH_OPTIONS)),
)
# The batch form: one entry per OpenStack cluster; params holds the module's own options for it.
CLUSTERS_SPEC = dict(
    clusters=dict(type="list", elements="dict", options=dict(
        name=dict(type="str", required=True),
        secret_auth=dict(type="dict", no_log=False, options=copy.deepcopy(SECRET_AUTH_OPTIONS)),
        params=dict(type="dict", default={}),
    )),
)
# Clusters served side by side (Keystone calls wait on the network, not on the CPU).
BATCH_WORKERS = 8


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
    # openstack.cloud's auth is a no_log dict, and its cloud may be one (a cloud's settings with their auth):
    # of them only passwords, tokens, secrets and keys stay masked, a cloud's name and the URLs stay readable.
    narrowed_options = ("kubeconfig", "auth", "cloud")

    def narrowed_strings(self, params):
        secret, public = super(KeystoneModule, self).narrowed_strings(params)
        for strings in (masking.auth_strings(params.get("auth")), masking.cloud_strings(params.get("cloud"))):
            secret, public = secret | strings[0], public | strings[1]
        return secret, public - secret

    # Options the module needs, given at the top or in every entry of clusters (checked after merging).
    cluster_required = ()

    def __init__(self):
        self.count_waiting_from_here()
        self.own_spec = self.argument_spec
        spec = dict(KEYSTONE_RETRY_SPEC)
        spec.update(CLOUD_SPEC)
        spec.update(self.kube_connection_spec())
        spec.update(SECRET_AUTH_SPEC)
        spec.update(CLUSTERS_SPEC)
        spec.update(self.argument_spec)
        self.argument_spec = spec
        self.module_kwargs = dict(self.module_kwargs, mutually_exclusive=[("secret_auth", "cloud"), ("secret_auth", "auth")])
        self.cluster = None
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

    @classmethod
    def argument_secrets(cls, params):
        """Values of the module's no_log options given per cluster (clusters[].params), masked before validation:
        params is a plain dict, so Ansible does not know which of its keys are secret."""
        secret = [key for key, spec in cls.argument_spec.items() if spec.get("no_log")]
        found = super(KeystoneModule, cls).argument_secrets(params)
        for entry in params.get("clusters") or []:
            values = entry.get("params") if isinstance(entry, dict) else None
            if isinstance(values, dict):
                found.update(str(values[key]) for key in secret if values.get(key) not in (None, ""))
        return found

    def openstack_cloud_from_module(self):
        self.ansible.settle_masks()  # before secret_auth masks the password it reads
        settings = self.params.get("secret_auth")
        clusters = self.params.get("clusters")
        if not settings and not (clusters is not None and all(c.get("secret_auth") for c in clusters)
                                 and not self.params.get("cloud") and not self.params.get("auth")):
            return super(KeystoneModule, self).openstack_cloud_from_module()
        self.params.pop("cloud", None)
        try:
            sdk = importlib.import_module("openstack")
        except ImportError:
            self.fail_json(msg="openstacksdk is required for this module")
        if not settings:
            return sdk, None  # every cluster connects with its own secret_auth
        self.sdk = sdk
        try:
            return sdk, self.secret_auth_connection(settings)
        except KeystoneError as exc:
            self.fail_json(msg=str(exc))

    def secret_auth_connection(self, settings):
        """An SDK connection as the user of secret_auth (password read from its Secret)."""
        password = self.secret_password(settings)
        try:
            return self.sdk.connect(
                auth_type="password",
                auth=dict(auth_url=settings["auth_url"], username=settings["username"], password=password,
                          project_name=settings["project_name"], user_domain_name=settings["domain_name"],
                          project_domain_name=settings["domain_name"]),
                region_name=self.params["region_name"], verify=self.params["validate_certs"],
                cacert=self.params["ca_cert"], api_timeout=self.params["api_timeout"],
                interface=settings.get("interface") or self.params["interface"])
        except self.sdk.exceptions.SDKException as exc:
            raise KeystoneError(str(exc))

    def secret_password(self, settings):
        """The password of secret_auth, read from its Secret and masked from here on."""
        where = "Secret %s/%s" % (settings["secret_namespace"], settings["secret_name"])
        try:
            live = self.read_secret(settings["secret_namespace"], settings["secret_name"])
        except (KubeError, InputError) as exc:  # InputError: an unusable Kubernetes connection (its kubeconfig)
            raise KeystoneError("secret_auth: reading %s failed: %s" % (where, exc))
        password = decoded(live).get(settings["secret_key"])
        if not password:
            raise KeystoneError("secret_auth: %s %s" % (where, "does not exist" if live is None else
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
        return ("OpenStack cluster %s: " % self.cluster if self.cluster else "") + self._keystone_where()

    def _keystone_where(self):
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

    # -- many clusters -----------------------------------------------------------

    def cluster_params(self, entry=None):
        """The module's parameters with one entry of clusters applied (if any), and their problems."""
        merged = dict(self.params)
        merged.pop("clusters", None)
        problems = []
        if entry is not None:
            where = "clusters[%s].params" % entry["name"]
            # Only the module's own options, without defaults: unset ones keep the module's values.
            spec = dict((key, dict((k, v) for k, v in value.items() if k not in ("default", "required")))
                        for key, value in self.own_spec.items())
            raw = entry.get("params") or {}
            result = ArgumentSpecValidator(spec).validate(dict(raw))
            self.hide(*result._no_log_values)
            problems.extend("%s: %s" % (where, error) for error in result.error_messages)
            merged.update((key, result.validated_parameters.get(key)) for key in raw if key in spec)
            if entry.get("secret_auth"):
                merged["secret_auth"] = entry["secret_auth"]
        for key in self.cluster_required:
            if merged.get(key) in (None, "", []):
                problems.append("%s is required%s" % (
                    key, " (at the top or in clusters[%s].params)" % entry["name"] if entry else ""))
        return merged, problems

    def run_clusters(self):
        """run() once per entry of clusters, side by side, each with its own parameters and connection."""
        entries = self.params["clusters"]
        problems, prepared = [], []
        names = [entry["name"] for entry in entries]
        problems.extend("clusters: %s is listed more than once" % name
                        for name in sorted(set(n for n in names if names.count(n) > 1)))
        for entry in entries:
            params, found = self.cluster_params(entry)
            problems.extend(found)
            prepared.append((entry, params))
        if problems:
            raise InputError(problems)
        self.client  # noqa: B018 - one Kubernetes client, built before the workers share it
        self.drift_found()  # and what they record for drift.yml
        workers = []
        for entry, params in prepared:
            worker = copy.copy(self)
            worker.params, worker.cluster, worker.results = params, entry["name"], {"changed": False}
            worker.uses_own_auth = bool(entry.get("secret_auth"))
            workers.append(worker)
        if workers:
            with ThreadPoolExecutor(max_workers=min(len(workers), BATCH_WORKERS)) as pool:
                outcomes = list(pool.map(KeystoneModule.run_cluster, workers))
        else:
            outcomes = []
        results, failures = [], []
        for worker, error in outcomes:
            entry = dict(worker.results, name=worker.cluster)
            entry.pop("diff", None)
            if error:
                entry.update(failed=True, msg=error)
                failures.append("OpenStack cluster %s: %s" % (worker.cluster, error))
            results.append(entry)
            if worker.results.get("changed"):
                self.results["changed"] = True
            if worker.results.get("diff"):
                self.results.setdefault("diff", []).extend(worker.results["diff"])
        self.results["clusters"] = results
        if failures:
            raise KeystoneError("%d of %d OpenStack cluster(s) failed:\n%s" % (
                len(failures), len(results), "\n".join("- " + f for f in failures)))

    def run_cluster(self):
        """(this worker, None or the cluster's error message); a worker is a copy of the module."""
        try:
            if self.uses_own_auth:
                self.conn = self.secret_auth_connection(self.params["secret_auth"])
                self.cloud_name = None
            self.run()
            return self, None
        except KeystoneError as exc:
            self.results.update(exc.details)
            return self, self._strip(str(exc))
        except InputError as exc:
            return self, "invalid input, nothing was changed: %s" % exc
        except KubeError as exc:
            return self, str(exc)
        except self.sdk.exceptions.SDKException as exc:
            return self, "%s: %s" % (self._keystone_where(), short_error(exc))

    def _strip(self, message):
        """A worker's message without the cluster prefix the batch's message puts before it."""
        prefix = "OpenStack cluster %s: " % self.cluster
        return message[len(prefix):] if message.startswith(prefix) else message

    def __call__(self):
        try:
            if self.params.get("clusters") is not None:
                self.run_clusters()
            else:
                params, problems = self.cluster_params()
                if problems:
                    raise InputError(problems)
                self.params = params
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
