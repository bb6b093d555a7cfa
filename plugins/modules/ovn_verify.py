#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ovn_verify
short_description: Check the region's OVN against its network plan
version_added: 0.6.0
description:
  - Reads the C(OVNCluster) (C(ovn.c5c3.io/v1alpha1)), its C(OVNChassis) and the C(Neutron) CR on the
    control-plane cluster, and from each hypervisor pool's own cluster the Nodes the OVNCluster's controller
    C(nodeSelector) selects (C(node-role.kubernetes.io/hypervisor)); one LIST or GET each.
  - Checks that the OVNCluster is Ready for its current generation (C(observedGeneration)), that each
    Raft database has all its members (C(replicas)), that C(chassisCount) is the number of hypervisor Nodes,
    that every such Node has one chassis and every chassis a Node, that each chassis' geneve address is its
    Node's InternalIP, inside its pool's underlay, a planned encapsulation address and unique, that its bridge
    mappings are the planned ones, and that Neutron's C(nbConnection)/C(sbConnection) are the OVNCluster's
    endpoints.
  - With O(wait), polls until all of that holds; a timeout fails with one message naming everything wrong
    (a missing chassis by Node, an extra one by name, a missing Raft member by name).
  - Never writes. C(docs/network.md) describes the checks.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
options:
  plan:
    description: The region's network plan, as the filter C(c5c3.cobaltcore.network_plan) returns it.
    type: dict
    required: true
  pools:
    description: The hypervisor pools' clusters, each with C(name) (the pool) and its C(kubeconfig) (and C(context)).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The hypervisor pool.
        type: str
        required: true
      kubeconfig:
        description: The pool cluster's kubeconfig (a path or a dict).
        type: raw
        required: true
      context:
        description: The kubeconfig context.
        type: str
  namespace:
    description: The OVNCluster's namespace.
    type: str
    default: ovn-system
  name:
    description: The OVNCluster.
    type: str
    default: ovn
  neutron_namespace:
    description: The namespace of the Neutron CR that must use the OVNCluster's endpoints.
    type: str
    default: openstack
  neutron_name:
    description: The Neutron CR.
    type: str
    default: neutron
  wait:
    description: Wait until everything checks out.
    type: bool
    default: false
  timeout:
    description: Seconds to wait with O(wait).
    type: int
    default: 600
  sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Wait for OVN as planned
  c5c3.cobaltcore.ovn_verify:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    plan: "{{ plan }}"
    pools:
      - {name: hv-pool-a, kubeconfig: "{{ hostvars['hv-pool-a'].cobaltcore_kubeconfig }}"}
      - {name: hv-pool-b, kubeconfig: "{{ hostvars['hv-pool-b'].cobaltcore_kubeconfig }}"}
    wait: true
    timeout: 600
  register: ovn

- name: Report the tenant MTU
  ansible.builtin.debug:
    msg: "tenant networks: MTU {{ ovn.tenant_mtu }}"
"""

RETURN = r"""
ready:
  description: Everything checks out.
  returned: always
  type: bool
problems:
  description: One line per problem found (empty when RV(ready)).
  returned: always
  type: list
  elements: str
tenant_mtu:
  description: The MTU of tenant (geneve) networks - the smallest pool's underlay MTU minus Neutron's geneve overhead.
  returned: always
  type: int
pools:
  description: Per pool its C(underlay) and C(tenant_mtu).
  returned: always
  type: dict
chassis:
  description: One entry per chassis with a Node - C(name), C(pool), C(node), C(ip), C(node_ip), C(system_id),
    C(bridge_mappings), C(ready).
  returned: always
  type: list
  elements: dict
raft:
  description: Per database (C(northbound), C(southbound)) C(replicas), C(ready_replicas), C(members), C(missing).
  returned: always
  type: dict
endpoints:
  description: The OVNCluster's published endpoints.
  returned: always
  type: dict
chassis_count:
  description: The OVNCluster's status.chassisCount.
  returned: when the OVNCluster exists
  type: int
hypervisor_nodes:
  description: The number of hypervisor Nodes across the pools.
  returned: when the OVNCluster exists
  type: int
requests:
  description: API requests this call made to the control-plane cluster, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ovn_api


class OvnVerifyModule(KubeModule):
    argument_spec = dict(
        plan=dict(type="dict", required=True),
        pools=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            kubeconfig=dict(type="raw", required=True, no_log=True),
            context=dict(type="str"),
        )),
        namespace=dict(type="str", default="ovn-system"),
        name=dict(type="str", default="ovn"),
        neutron_namespace=dict(type="str", default="openstack"),
        neutron_name=dict(type="str", default="neutron"),
        wait=dict(type="bool", default=False),
        timeout=dict(type="int", default=600),
        sleep=dict(type="int", default=5),
    )

    def run(self):
        params = self.params
        pool_clients = dict((pool["name"], KubeClient({"kubeconfig": pool["kubeconfig"], "context": pool.get("context")}))
                            for pool in params["pools"])
        try:
            if params["wait"]:
                try:
                    found = ovn_api.await_report(self.client, pool_clients, params["plan"], params,
                                                 progress=self.progress)
                except WaitError as exc:
                    self.results.update(exc.objects[0])
                    raise
            else:
                found = ovn_api.report(self.client, pool_clients, params["plan"], params)
        finally:
            for client in pool_clients.values():
                client.close()
        self.results.update(found)


def main():
    OvnVerifyModule()()


if __name__ == "__main__":
    main()
