# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's Kubernetes modules: the connection, masking, check mode, results, errors.

A module is a small subclass with its `argument_spec` and `run()`; `run()`
fills `self.results`. Errors of the layers below become one clear failure.
The Kubernetes connection (options, client, apply, masking) is the KubeConnection mixin.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.connection import KubeConnection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError

# The options of a module that waits for an operator's long work (doc fragment c5c3.cobaltcore.operator_wait).
OPERATOR_WAIT_SPEC = dict(
    wait_timeout=dict(type="int", default=1800),
    wait_sleep=dict(type="int", default=5),
)

WAIT_CONDITION_SPEC = dict(
    type=dict(type="str", required=True),
    status=dict(type="str", default="True", choices=["True", "False", "Unknown"]),
    reason=dict(type="str"),
)


class MaskingAnsibleModule(AnsibleModule):
    """An AnsibleModule that masks its arguments' secrets before validating them.

    A failed validation echoes every argument (invocation.module_args), so secrets that
    no no_log option covers (a Secret in a manifest) are masked as soon as the arguments
    are read. Public strings that a no_log option made Ansible mask (a kubeconfig's names)
    are unmasked before the first output.
    """

    def __init__(self, argument_spec, secrets, public, **kwargs):
        """secrets(raw params): strings to mask; public(params, argument_spec): strings to unmask."""
        self._secrets = secrets
        self._public = public
        self._settled = False
        super(MaskingAnsibleModule, self).__init__(argument_spec, **kwargs)

    def _load_params(self):
        super(MaskingAnsibleModule, self)._load_params()
        self.no_log_values.update(self._secrets(self.params))

    def settle_masks(self):
        if not self._settled:
            self._settled = True
            self.no_log_values.difference_update(self._public(self.params, self.argument_spec))

    def exit_json(self, **kwargs):
        self.settle_masks()
        super(MaskingAnsibleModule, self).exit_json(**kwargs)

    def fail_json(self, msg, **kwargs):
        self.settle_masks()
        super(MaskingAnsibleModule, self).fail_json(msg, **kwargs)


class KubeModule(KubeConnection):
    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        self.count_waiting_from_here()
        spec = self.kube_connection_spec()
        spec.update(self.argument_spec)
        self.ansible = MaskingAnsibleModule(spec, self.argument_secrets, self.unmaskable,
                                            supports_check_mode=True, **self.module_kwargs)
        self.ansible.settle_masks()  # before run() masks what it reads
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        self.diff = self.ansible._diff
        self.results = {"changed": False}

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
