#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: hypervisor_rollout
short_description: Update a hypervisor pool's operating system a bounded number of Nodes at a time
version_added: 0.6.0
description:
  - Reads the pool cluster's C(Hypervisor)s (C(kvm.cloud.sap/v1)) and updates each whose
    C(status.operatingSystem.version) is not O(version), at most O(max_unavailable) Nodes out at once (Nodes in
    maintenance for another reason count), in name order.
  - Each Node - C(spec.maintenance=manual) with C(spec.maintenanceReason) C(cobaltcore - operating system update to
    <version>) (the hypervisor operator disables its compute service and evicts its instances), then once evicted
    C(spec.version) and C(spec.reboot=true) (kvm-node-agent installs the version with systemd-sysupdate and reboots
    into it), then once it runs the version the maintenance is lifted and the module waits until the Hypervisor is
    C(Ready) again. All three by server-side apply under the field manager C(c5c3.cobaltcore-hypervisor-rollout).
  - A Node that does not come back - an update kvm-node-agent stopped (C(OperatingSystemUpdate) C(Stopped)), or a
    step that did not finish within O(wait_timeout) - stops the rollout naming it; it stays in maintenance, no
    further Node is taken out.
  - A run that stopped resumes with the Nodes it had taken out; a pool that runs the version reports
    C(changed=false). In check mode it returns the plan and writes nothing.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
options:
  version:
    description: The operating system version the pool's hypervisors are to run (kvm-node-agent's C(spec.version)).
    type: str
    required: true
  max_unavailable:
    description: How many Nodes may be out at once - a count, or a percentage of the pool (rounded down, at least 1).
    type: raw
    default: 1
  wait_timeout:
    description: Seconds each step of a batch (eviction, update, return) may take.
    type: int
    default: 1800
  wait_sleep:
    description: Longest pause in seconds between two looks at the Hypervisors.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Update hv-pool-a to Garden Linux 1592.7, one Node at a time
  c5c3.cobaltcore.hypervisor_rollout:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    version: "1592.7"
    max_unavailable: 1
"""

RETURN = r"""
nodes:
  description: Per Hypervisor, C(name), C(from) (the version it ran when the module looked first) and C(stage).
  returned: always
  type: list
  elements: dict
batches:
  description: The Nodes updated together, batch by batch, in order (when not in check mode).
  returned: always
  type: list
  elements: list
max_out:
  description: The most Nodes the module saw in maintenance at once while it ran.
  returned: always
  type: int
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import hypervisor_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisor_rollout as rollout


class HypervisorRolloutModule(KubeModule):
    argument_spec = dict(
        version=dict(type="str", required=True),
        max_unavailable=dict(type="raw", default=1),
        wait_timeout=dict(type="int", default=1800),
        wait_sleep=dict(type="int", default=5),
    )

    def run(self):
        params = self.params
        problems = rollout.max_unavailable_problems(params["max_unavailable"])
        if problems:
            raise InputError(problems)
        try:
            self.rtype = self.client.resource(rollout.API_VERSION, rollout.KIND)
        except KubeError:
            self.fail("the pool cluster does not serve Hypervisors (%s): phase 3 installs the hypervisor operator"
                      % rollout.API_VERSION)
        hypervisors = self.hypervisors()
        if not hypervisors:
            self.fail("the pool cluster has no Hypervisor")
        version = params["version"]
        planned = rollout.plan(hypervisors, version, params["max_unavailable"])
        self.results.update(
            nodes=[{"name": hv["metadata"]["name"], "from": rollout.os_version(hv),
                    "stage": planned["stages"][hv["metadata"]["name"]] or "to update"} for hv in hypervisors],
            batches=[], max_out=self.out_count(hypervisors), changed=bool(planned["todo"]))
        if self.check_mode or not planned["todo"]:
            return
        room = planned["batch"] - len(planned["out"])
        if room < 1:
            self.fail("max_unavailable %s leaves no Node to take out: %s already in maintenance for another reason"
                      % (params["max_unavailable"], ", ".join(planned["out"])))
        todo = planned["todo"]
        found = self.by_name(hypervisors)
        for start in range(0, len(todo), room):
            batch = todo[start:start + room]
            self.results["batches"].append(batch)
            found = self.update(batch, version, found)

    def hypervisors(self):
        found = self.client.list(self.rtype)
        self.results["max_out"] = max(self.results.get("max_out") or 0, self.out_count(found))
        return found

    @staticmethod
    def by_name(hypervisors):
        return dict((hv["metadata"]["name"], hv) for hv in hypervisors)

    @staticmethod
    def out_count(hypervisors):
        return sum(1 for hv in hypervisors if (hv.get("spec") or {}).get("maintenance"))

    def apply(self, names, version, step):
        for name in names:
            self.client.server_side_apply(self.rtype, rollout.manifest(name, version, step), rollout.FIELD_MANAGER,
                                          force=True)

    def update(self, batch, version, found):
        """Take the batch out, update it and bring it back, each step waited for on every Node of the batch;
        found: the Hypervisors by name as last read. Returns them as the last wait read them."""
        def at(stage):
            return [n for n in batch if n in found and rollout.stage(found[n], version) == stage]

        self.apply(at(None), version, "enter")
        found = self.wait(batch, version, "evicted", lambda hv: rollout.stage(hv, version) in (
            rollout.EVICTED, rollout.UPDATING, rollout.UPDATED))
        since = timestamps.format_datetime()
        self.apply(at(rollout.EVICTED), version, "update")
        self.wait(batch, version, "running %s" % version, lambda hv: rollout.os_version(hv) == version, since)
        self.apply(batch, version, "leave")
        return self.wait(batch, version, "Ready again", lambda hv: rollout.is_ready(hv) and not
                         (hv.get("spec") or {}).get("maintenance"))

    def wait(self, batch, version, what, done, since=None):
        """Until done(hv) holds for every Node of the batch; returns the Hypervisors by name as last read."""
        def attempt():
            found = self.by_name(self.hypervisors())
            failed = [(n, rollout.failure(found[n], version, since)) for n in batch if n in found and since]
            failed = ["%s: %s" % (n, why) for n, why in failed if why]
            if failed:
                raise WaitError("the operating system update to %s stopped, no further Node was taken out: %s"
                                % (version, "; ".join(failed)), [])
            pending = [n for n in batch if n not in found or not done(found[n])]
            offer(self.progress, lambda: "Nodes %s: waiting until %s: %s" % (", ".join(batch), what, ", ".join(pending)))
            return not pending, (pending, found)

        finished, (pending, found) = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not finished:
            raise WaitError("Nodes %s did not come back within %ss (waiting until %s), no further Node was taken out: %s"
                            % (", ".join(batch), self.params["wait_timeout"], what, "; ".join(
                                "%s (%s)" % (n, self.describe(found.get(n))) for n in pending)), [])
        return found

    def describe(self, hv):
        if hv is None:
            return "its Hypervisor is gone"
        ready = condition(hv, "Ready") or {}
        held = None
        if (hv.get("spec") or {}).get("maintenance") and not rollout.evicted(hv):
            held = rollout.eviction_holds(hypervisor_api.eviction(self.client, hv["metadata"]["name"]))
        return "Ready %s %s: %s; operating system %s%s" % (
            ready.get("status"), ready.get("reason"), ready.get("message"), rollout.os_version(hv),
            "; %s" % held if held else "")


def main():
    HypervisorRolloutModule()()


if __name__ == "__main__":
    main()
