#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: hypervisor_maintenance
short_description: Take one hypervisor Node into maintenance, its instances evicted, and back
version_added: 0.6.0
description:
  - O(state=on) - sets the Node's C(Hypervisor) (C(kvm.cloud.sap/v1), named after the Node) to C(spec.maintenance=manual)
    with C(spec.maintenanceReason) O(reason), under the field manager C(c5c3.cobaltcore-maintenance); the hypervisor
    operator disables its compute service and evicts its instances (its C(Eviction) of the Node's name). Waits until
    they are evicted (C(status.evicted), condition C(Evicting) C(False)); a Node not evicted within O(wait_timeout)
    fails the module naming what its C(Eviction) still holds - the instances left on it and the last failed
    migration (an instance in C(ERROR) is never evicted by the operator) - and stays in maintenance.
  - O(state=off) - lifts the maintenance it set and waits until the Hypervisor is C(Ready) again. A Node in
    maintenance for another reason (an operating system update of M(c5c3.cobaltcore.hypervisor_rollout), someone's
    own) is refused, naming the reason; O(state=on) on such a Node only waits for its eviction.
  - A Node already as asked reports C(changed=false). A cluster without a Hypervisor of that name reports
    RV(found=false) and changes nothing (maintenance.yml runs on every hypervisor pool; one of them has it).
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Reads the Hypervisor and sends the change as a server-side dry run; nothing is written or waited for.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  node:
    description: The Node (and its Hypervisor).
    type: str
    required: true
  state:
    description: In maintenance (C(on)) or not (C(off)).
    type: str
    choices: ["on", "off"]
    required: true
  reason:
    description: The maintenance reason the module sets and recognises as its own.
    type: str
    default: cobaltcore - maintenance
"""

EXAMPLES = r"""
- name: Take hv-pool-a-node-1 into maintenance, its instances evicted
  c5c3.cobaltcore.hypervisor_maintenance:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    node: hv-pool-a-node-1
    state: "on"
"""

RETURN = r"""
found:
  description: Whether this cluster has the Hypervisor.
  returned: always
  type: bool
maintenance:
  description: Who held the Node in maintenance before - C(null), C(ours), or the other holder's reason.
  returned: when found
  type: str
eviction:
  description: What the Node's C(Eviction) still held when O(state=on) timed out (its instances, the failed migration).
  returned: on failure, when the eviction did not end
  type: str
ready:
  description: The Hypervisor's condition Ready as the module last read it (C(status), C(reason), C(message)).
  returned: when found
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import hypervisor_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisor_rollout as rollout


class HypervisorMaintenanceModule(KubeModule):
    argument_spec = dict(
        node=dict(type="str", required=True),
        state=dict(type="str", required=True, choices=["on", "off"]),
        reason=dict(type="str", default=rollout.MAINTENANCE_REASON),
        **OPERATOR_WAIT_SPEC
    )

    def run(self):
        node, on, why = self.params["node"], self.params["state"] == "on", self.params["reason"]
        try:
            self.rtype = self.client.resource(rollout.API_VERSION, rollout.KIND)
        except KubeError as exc:
            if exc.status != 404:
                raise
            self.results.update(found=False)  # no hypervisor operator here: no Hypervisor either
            return
        hv = self.client.get(self.rtype, node)
        self.results.update(found=hv is not None)
        if hv is None:
            return
        owner = rollout.maintenance_owner(hv, why)
        self.results.update(maintenance=owner, ready=self.ready(hv))
        if not on and owner not in (None, "ours"):
            raise InputError([problem("node", "Node %s is in maintenance for another reason (%s): maintenance.yml "
                                      "lifts only its own" % (node, owner))])
        write = (on and owner is None) or (not on and owner == "ours")
        if write:
            self.client.server_side_apply(self.rtype, rollout.maintenance_manifest(node, on, why),
                                          rollout.MAINTENANCE_FIELD_MANAGER, force=True, dry_run=self.check_mode)
            self.results["changed"] = True
        if self.check_mode:
            return
        if on:
            hv = self.wait(node, "its instances are evicted", rollout.evicted)
        elif write or not rollout.is_ready(hv):
            hv = self.wait(node, "it is Ready again", lambda found: rollout.is_ready(found) and
                           not (found.get("spec") or {}).get("maintenance"))
        self.results["ready"] = self.ready(hv)

    @staticmethod
    def ready(hv):
        found = condition(hv, "Ready") or {}
        return dict((k, found.get(k)) for k in ("status", "reason", "message"))

    def wait(self, node, what, done):
        def attempt():
            hv = self.client.get(self.rtype, node)
            offer(self.progress, lambda: "Node %s: waiting until %s" % (node, what))
            return hv is not None and done(hv), hv

        finished, hv = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not finished:
            if hv is None:
                why = "its Hypervisor is gone"
            elif self.params["state"] == "on":
                why = (rollout.eviction_holds(hypervisor_api.eviction(self.client, node)) or
                       "its Eviction ended, the Hypervisor does not say so yet")
                self.results["eviction"] = why
            else:
                why = "Ready %s" % self.ready(hv)
            raise WaitError("Node %s: not done within %ss (waiting until %s): %s" % (
                node, self.params["wait_timeout"], what, why), [])
        return hv


def main():
    HypervisorMaintenanceModule()()


if __name__ == "__main__":
    main()
