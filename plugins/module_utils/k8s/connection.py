# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes connection of a module: its options, its one client, apply, results and masking.

KUBE_CONNECTION_SPEC is the one definition of the connection options, named as
kubernetes.core names them (one module_defaults group serves both collections);
doc fragment c5c3.cobaltcore.kube_connection documents them. KubeConnection is the
mixin of both module bases (KubeModule, KeystoneModule): the client is built from
the options in its kube_options only, so options of another connection (Keystone's
validate_certs, ca_cert, client_cert, client_key, api_timeout, ...) never reach it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import contextlib
import copy
import json
import os

from ansible.module_utils.common.parameters import remove_values
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import waited_seconds
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import reporter_from_env
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import (
    Applier, changed, describe, field_diff, namespace_exists, ref_of)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.drift import DRIFT_ENV, map_values
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import FIELD_MANAGER, KubeClient, KubeError

KUBE_CONNECTION_SPEC = dict(
    kubeconfig=dict(type="raw", no_log=True),
    context=dict(type="str"),
    host=dict(type="str"),
    api_key=dict(type="str", no_log=True),
    username=dict(type="str"),
    password=dict(type="str", no_log=True),
    validate_certs=dict(type="bool", aliases=["verify_ssl"]),
    ca_cert=dict(type="path", aliases=["ssl_ca_cert"]),
    client_cert=dict(type="path", aliases=["cert_file"]),
    client_key=dict(type="path", aliases=["key_file"]),
    proxy=dict(type="str"),
    no_proxy=dict(type="str"),
    proxy_headers=dict(type="dict", options=dict(
        proxy_basic_auth=dict(type="str", no_log=True),
        basic_auth=dict(type="str", no_log=True),
        user_agent=dict(type="str"),
    )),
    persist_config=dict(type="bool"),
    impersonate_user=dict(type="str"),
    impersonate_groups=dict(type="list", elements="str"),
)


def ref_of_result(result):
    return dict((key, result.get(key)) for key in ("apiVersion", "kind", "namespace", "name"))


class KubeConnection(object):
    """The Kubernetes side of a module: client, applier, result recording, masking, request counts.

    kube_options maps this module's option names to the connection options (KubeClient's
    auth keys). The host class provides params, ansible (the AnsibleModule), check_mode,
    diff and results.
    """

    kube_options = dict((name, name) for name in KUBE_CONNECTION_SPEC)
    # KubeClient's retry policy (retries, retry_budget, ...); a module that reports reachability sets a short one.
    client_options = {}
    _client = None

    waited_at_start = 0.0

    def count_waiting_from_here(self):
        """A call's own waiting (waited_seconds) is counted from here: a process (a test) may run several calls."""
        self.waited_at_start = waited_seconds()

    @classmethod
    def kube_connection_spec(cls):
        return dict((option, copy.deepcopy(KUBE_CONNECTION_SPEC[key])) for option, key in cls.kube_options.items())

    def kube_auth(self):
        """The client's auth options, read from this module's Kubernetes connection options only."""
        return dict((key, self.params.get(option)) for option, key in self.kube_options.items())

    @property
    def client(self):
        if self._client is None:
            self._client = KubeClient(self.kube_auth(), **self.client_options)
        return self._client

    @property
    def progress(self):
        """The progress Reporter the collection's action plugin asked for, else None (waits stay silent).

        Lines are masked with this module's no_log values, as Ansible masks its result.
        """
        if not hasattr(self, "_progress"):
            self._progress = reporter_from_env(mask=lambda line: remove_values(line, self.ansible.no_log_values))
        return self._progress

    @property
    def drift(self):
        """The file the action asked this module to write its objects' drift to (playbooks/drift.yml), or None:
        only ever in check mode."""
        return os.environ.get(DRIFT_ENV) or None if self.check_mode else None

    def applier(self, **options):
        return Applier(self.client, check_mode=self.check_mode, diff=self.diff, drift=bool(self.drift), **options)

    def record(self, results, via=None):
        """Fold apply or remove results into this module's result: changed and the diff; with drift asked for, the
        objects declared and the drift of each that has any (written by write_drift). via: the module option of
        the kubeconfig the results come from, when not kubeconfig (secret_copy's target)."""
        if changed(results):
            self.results["changed"] = True
        if self.drift:
            found = self.drift_found()
            for r in results:
                ref = dict(ref_of_result(r), via=via) if via else ref_of_result(r)
                if r["result"] not in ("deleted", "absent"):
                    found["declared"].append(ref)
                # An object a module creates without the Applier (write_as_read) is as missing as any other.
                drift = r.pop("drift", None) or ({"missing": True} if r["result"] == "created" else None)
                if drift:
                    found["drift"].append(dict(ref, result=r["result"], **drift))
        if self.diff:
            self.results.setdefault("diff", []).extend(
                dict(r["diff"], before_header=describe(r), after_header=describe(r)) for r in results if "diff" in r)
        return results

    def drift_found(self):
        """What record() collected for write_drift; a module's copies (a worker per cluster) made after the first
        call share it."""
        return self.__dict__.setdefault("_drift", {"declared": [], "drift": []})

    def write_drift(self):
        """The objects' drift for the action (plugin_utils/drift.py), beside the result: names and field paths as
        they are, only the values masked. Ansible masks the whole result with the module's no_log values, and a
        secret that happens to equal a part of a name ("lab") would garble the names the report matches."""
        path = self.drift
        if not path:
            return
        found = self.drift_found()
        masked = [map_values(entry, lambda value: remove_values(value, self.ansible.no_log_values))
                  for entry in found["drift"]]
        with open(path, "w") as handle:
            json.dump({"declared": found["declared"], "drift": masked}, handle, default=str)

    def write_as_read(self, obj, live):
        """Apply one normalized object over the version read (live's resourceVersion as precondition), or create it
        only when it was absent. Its apply result, recorded; None when another writer changed or created it since."""
        if live is None:
            rtype = self.client.resource(obj["apiVersion"], obj["kind"])
            query = {"fieldManager": FIELD_MANAGER}
            if self.check_mode:
                query["dryRun"] = "All"
            namespace = obj["metadata"].get("namespace")
            try:
                status, after = self.client.request("POST", rtype.path(namespace), body=obj, query=query, allow=(409,))
            except KubeError as error:
                # Check mode after an earlier task that would have created the namespace (as the Applier does).
                if not (self.check_mode and error.status == 404 and namespace
                        and not namespace_exists(self.client, namespace)):
                    raise
                return self.record([dict(ref_of(obj), result="created", note="its namespace does not exist yet")])[0]
            if status == 409:
                return None
            result = dict(ref_of(obj), result="created")
            if self.diff:
                result["diff"] = field_diff(obj, None, after, FIELD_MANAGER)
            return self.record([result])[0]
        obj = dict(obj, metadata=dict(obj["metadata"], resourceVersion=live["metadata"]["resourceVersion"]))
        try:
            return self.record(self.applier(force_conflicts=True).apply([obj]))[0]
        except KubeError as error:
            if error.status == 409:
                return None
            raise

    @contextlib.contextmanager
    def other_client(self, kubeconfig, context=None):
        """A client of another cluster (a kubeconfig option of other_kubeconfigs); its requests count in this call's
        `requests`."""
        other = KubeClient({"kubeconfig": kubeconfig, "context": context})
        try:
            yield other
        finally:
            for verb, count in other.requests.items():
                self.client.requests[verb] = self.client.requests.get(verb, 0) + count

    def _with_requests(self, result):
        """The result as the module exits with it (its last step: the drift is written here too)."""
        self.write_drift()
        if self._client is not None:
            result["requests"] = dict(self._client.requests)
        waited = waited_seconds() - self.waited_at_start
        if waited > 0:
            result["waited_seconds"] = round(waited, 1)
        return result

    # -- masking ---------------------------------------------------------------

    def hide(self, *values):
        """Mask values (credentials read or made) in everything Ansible prints from here on."""
        self.ansible.no_log_values.update(str(v) for v in values if v not in (None, "") and not isinstance(v, bool))

    def hide_secret_values(self, objects):
        """Mask the values of Secret-kind objects wherever Ansible would echo them, in both encodings."""
        self.ansible.no_log_values.update(masking.secret_values(objects))

    # Options whose every leaf Ansible masks (no_log) although only some are secret; see narrowed_strings.
    narrowed_options = ("kubeconfig",)
    # Options with the kubeconfig of another cluster the module reaches (no_log, narrowed as its own kubeconfig).
    other_kubeconfigs = ()

    @classmethod
    def kubeconfig_options(cls):
        own = next((o for o, key in cls.kube_options.items() if key == "kubeconfig"), None)
        return (own,) + tuple(cls.other_kubeconfigs)

    def narrowed_strings(self, params):
        """(secret, public) strings of the narrowed options: each kubeconfig's credentials, and its names,
        servers and apiVersion."""
        secret, public = set(), set()
        for option in self.kubeconfig_options():
            credentials, names = masking.kubeconfig_strings(params.get(option))
            secret, public = secret | credentials, public | names
        return secret, public

    @classmethod
    def argument_secrets(cls, params):
        """Secrets of the raw arguments that no no_log option covers, masked before validation.

        A kubeconfig given as text is one no_log string to Ansible: its credentials are masked on their own
        too, wherever a part of it could appear.
        """
        found = set()
        for option in cls.kubeconfig_options():
            value = params.get(option) if isinstance(params, dict) else None
            if isinstance(value, str):
                found |= masking.kubeconfig_strings(value)[0]
        return found

    def unmaskable(self, params, spec):
        """The public strings to unmask: never one that a secret or another no_log option holds."""
        secret, public = self.narrowed_strings(params)
        skip = tuple(self.narrowed_options) + tuple(self.other_kubeconfigs)
        keep = masking.no_log_strings(spec, params, skip=skip) | self.argument_secrets(params)
        return public - secret - keep
