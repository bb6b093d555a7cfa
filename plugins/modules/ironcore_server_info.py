#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ironcore_server_info
short_description: List IronCore bare-metal Servers with their state, power, labels and claim
version_added: 0.2.0
description:
  - Reads the C(Server)s (C(metal.ironcore.dev/v1alpha1)) of the IronCore cluster with one request
    and returns them in a compact form, filtered by name, label selector, state, BMC or claim.
  - Also counts the selected servers by state, which tells at a glance how many can still be claimed.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
options:
  names:
    description: Only these Servers.
    type: list
    elements: str
  selector:
    description: A Kubernetes label selector (C(matchLabels), C(matchExpressions)) the Servers must match.
    type: dict
  states:
    description: Only Servers in these states (for example C(Available), C(Reserved), C(Error)).
    type: list
    elements: str
  bmc:
    description: Only the Servers behind this BMC.
    type: str
  claimed:
    description: Only claimed (true) or unclaimed (false) Servers.
    type: bool
"""

EXAMPLES = r"""
- name: Servers of rack 1 that can still be claimed
  c5c3.cobaltcore.ironcore_server_info:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    selector:
      matchLabels:
        c5c3.io/machine-pool: rack-1
    states: [Available]
    claimed: false
  register: free_servers
"""

RETURN = r"""
servers:
  description: The selected Servers, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The Server.
      type: str
    state:
      description: C(status.state) (Initial, Discovery, Available, Reserved, Released, Error, Maintenance).
      type: str
    power:
      description: C(status.powerState).
      type: str
    desired_power:
      description: C(spec.power).
      type: str
    labels:
      description: The Server's labels.
      type: dict
    bmc:
      description: The BMC the Server was discovered behind.
      type: str
    system_uuid:
      description: C(spec.systemUUID).
      type: str
    claim:
      description: C(namespace) and C(name) of the ServerClaim holding the Server, or null.
      type: dict
    unclaimable:
      description: Whether the Server is excluded from claims.
      type: bool
counts:
  description: Number of selected Servers per state.
  returned: always
  type: dict
  sample: {"Available": 3, "Reserved": 5}
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule


class IronCoreServerInfoModule(KubeModule):
    argument_spec = dict(
        names=dict(type="list", elements="str"),
        selector=dict(type="dict"),
        states=dict(type="list", elements="str"),
        bmc=dict(type="str"),
        claimed=dict(type="bool"),
    )

    def run(self):
        rtype = self.client.resource(ironcore.API_VERSION, "Server")
        servers = ironcore.filter_servers(
            self.client.list(rtype), names=self.params["names"], selector=self.params["selector"],
            states=self.params["states"], bmc=self.params["bmc"], claimed=self.params["claimed"])
        servers.sort(key=lambda s: s["name"])
        self.results.update(servers=servers, counts=ironcore.count_states(servers))


def main():
    IronCoreServerInfoModule()()


if __name__ == "__main__":
    main()
