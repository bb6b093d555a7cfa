# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's Kubernetes modules: auth, one client, check mode, results, errors.

A module is a small subclass with its `argument_spec` and `run()`; `run()`
fills `self.results`. Errors of the layers below become one clear failure.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import (
    SECRET_KINDS, Applier, changed, describe)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient, KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError

WAIT_CONDITION_SPEC = dict(
    type=dict(type="str", required=True),
    status=dict(type="str", default="True", choices=["True", "False", "Unknown"]),
    reason=dict(type="str"),
)


# Kubeconfig keys whose values are credentials; exec and auth-provider sections count as a whole.
KUBECONFIG_SECRET_KEYS = ("client-key-data", "client-key", "token", "password", "id-token", "refresh-token",
                          "access-token", "client-secret", "exec", "auth-provider")


def _collect_strings(node, public, secret, hidden):
    if isinstance(node, dict):
        for key, value in node.items():
            _collect_strings(value, public, secret, hidden or key in KUBECONFIG_SECRET_KEYS)
    elif isinstance(node, list):
        for value in node:
            _collect_strings(value, public, secret, hidden)
    elif node is not None:
        (secret if hidden else public).add(str(node))


class KubeModule:
    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        spec = dict(AUTH_ARG_SPEC)
        spec.update(self.argument_spec)
        self.ansible = AnsibleModule(argument_spec=spec, supports_check_mode=True, **self.module_kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        self.diff = self.ansible._diff
        self.results = {"changed": False}
        self._client = None
        self._unmask_kubeconfig_structure()

    def _unmask_kubeconfig_structure(self):
        """Keep only a kubeconfig dict's secrets masked.

        Ansible masks every string of a no_log dict option everywhere in the output, so an
        in-memory kubeconfig would turn each "v1" and "Config" of the results into asterisks.
        """
        kubeconfig = self.params.get("kubeconfig")
        if not isinstance(kubeconfig, dict):
            return
        public, secret = set(), set()
        _collect_strings(kubeconfig, public, secret, False)
        self.ansible.no_log_values.difference_update(public - secret)

    @property
    def client(self):
        if self._client is None:
            auth = dict((key, self.params.get(key)) for key in AUTH_ARG_SPEC)
            self._client = KubeClient(auth)
        return self._client

    def hide_secret_values(self, objects):
        """Mask Secret values wherever Ansible would echo them (invocation, -vvv), in both encodings."""
        for obj in objects:
            if not isinstance(obj, dict) or obj.get("kind") not in SECRET_KINDS:
                continue
            for key, encoded in (("stringData", False), ("data", True)):
                for value in (obj.get(key) or {}).values() if isinstance(obj.get(key), dict) else []:
                    value = str(value)
                    self.ansible.no_log_values.add(value)
                    # In a YAML string, a multi-line value (a PEM key) appears indented, line by line.
                    self.ansible.no_log_values.update(line.strip() for line in value.splitlines()
                                                      if len(line.strip()) >= 8)
                    if encoded:
                        try:
                            self.ansible.no_log_values.add(base64.b64decode(value).decode("utf-8"))
                        except (ValueError, UnicodeDecodeError):
                            pass
                    else:
                        self.ansible.no_log_values.add(base64.b64encode(value.encode("utf-8")).decode("ascii"))

    def applier(self, **options):
        return Applier(self.client, check_mode=self.check_mode, diff=self.diff, **options)

    def record(self, results):
        """Fold apply or remove results into this module's result: changed and the diff."""
        if changed(results):
            self.results["changed"] = True
        if self.diff:
            self.results.setdefault("diff", []).extend(
                dict(r["diff"], before_header=describe(r), after_header=describe(r)) for r in results if "diff" in r)
        return results

    def run(self):
        raise NotImplementedError

    def __call__(self):
        try:
            self.run()
        except InputError as exc:
            self.fail("invalid input, nothing was changed: %s" % exc, problems=exc.problems)
        except KubeError as exc:
            self.fail(str(exc), error=exc.as_dict())
        except WaitError as exc:
            self.fail(str(exc), objects=exc.objects)
        self.ansible.exit_json(**self._with_requests(self.results))

    def fail(self, msg, **extra):
        result = dict(self.results)
        result.update(extra)
        self.ansible.fail_json(msg=msg, **self._with_requests(result))

    def _with_requests(self, result):
        if self._client is not None:
            result["requests"] = dict(self._client.requests)
        return result
