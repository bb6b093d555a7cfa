#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ironcore_server_claim
short_description: Claim bare-metal servers for the region's pools with IronCore ServerClaims
version_added: 0.2.0
description:
  - Makes each pool hold O(pools[].count) C(ServerClaim)s (C(metal.ironcore.dev/v1alpha1)) that
    select servers by label, boot the pool's GardenLinux image with its ignition, and power them on.
  - Existing claims of a pool (label C(c5c3.io/pool)) are kept as they are; only the missing ones are
    created, named C(<pool>-<n>). The metal-operator binds each claim to a distinct C(Available)
    server, so a server claimed by another pool is never taken.
  - Before anything is written, the module checks for every pool together that enough servers match
    that metal-operator would bind (C(Available), unclaimed, not C(unclaimable), powered C(Off), not in
    maintenance, no C(NoBind) taint; pools that share servers are matched jointly). If not, it fails
    naming each short pool, how many servers it lacks, in which states the matching servers are, and
    which Available ones are held back and why (powered on, in maintenance, tainted).
  - A pool that holds more claims than it wants keeps them unless O(release_surplus) is set; then
    unbound claims are released first, then the highest-numbered.
  - Waits until every claim is C(Bound), its server C(Reserved) and, with power C(On), powered on.
  - While it waits, a server metal-operator v0.7.0 left reserved for one of the claims although the claim is bound
    to another server (its claim race on a stale cache) has its C(spec.serverClaimRef) cleared, with a warning
    naming it. The claim's C(serverRef) is immutable, so that reservation is never used, and metal-operator itself
    releases a server only when its claim is gone.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description:
      - Server-side dry runs; a shortage is reported as a warning (servers may still be discovered by this
        very run) and nothing is waited for.
    support: full
  diff_mode:
    description: Field-level diff of created claims and ignition Secrets (values redacted).
    support: full
options:
  namespace:
    description: Namespace of the claims on the IronCore cluster; created when missing.
    type: str
    required: true
  pools:
    description: The pools and how many servers each holds.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The pool (an inventory host, a Kubernetes cluster of the region).
        type: str
        required: true
      count:
        description: How many servers the pool holds (its workers).
        type: int
        required: true
      selector:
        description: Label selector (C(matchLabels), C(matchExpressions)) of the servers the pool may take.
        type: dict
        required: true
      image:
        description: The OS image the servers boot (GardenLinux).
        type: str
        required: true
      power:
        description: Power state of the claimed servers.
        type: str
        choices: ["On", "Off"]
        default: "On"
      ignition:
        description: Ignition configuration for the pool's servers, stored in the Secret O(pools[].ignition_secret).
        type: str
      ignition_secret:
        description:
          - Name of the Secret (key C(ignition)) the claims reference. Defaults to C(<pool>-ignition) when
            O(pools[].ignition) is given; without O(pools[].ignition) it must already exist.
        type: str
  release_surplus:
    description: Release (delete) claims beyond a pool's count. Their servers go back to the free pool.
    type: bool
    default: false
  wait:
    description: Wait until every claim of the pools is bound to a reserved, powered server.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait.
    type: int
    default: 900
  wait_sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 2
notes:
  - Changing a pool's selector or image affects new claims only; the metal-operator keeps bound claims as they are.
"""

EXAMPLES = r"""
- name: Claim servers for two hypervisor pools
  c5c3.cobaltcore.ironcore_server_claim:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: cobaltcore-servers
    pools:
      - name: hv-pool-a
        count: 3
        selector:
          matchLabels:
            c5c3.io/machine-pool: rack-1
            c5c3.io/machine-class: baremetal-kvm
        image: ghcr.io/gardenlinux/gardenlinux:1877.3
        ignition: "{{ lookup('ansible.builtin.file', 'ignition/hv-pool-a.json') }}"
      - name: hv-pool-b
        count: 2
        selector:
          matchLabels:
            c5c3.io/machine-class: baremetal-kvm
        image: ghcr.io/gardenlinux/gardenlinux:1877.3
        ignition_secret: hv-pool-b-ignition
"""

RETURN = r"""
pools:
  description: Per pool, what it holds and what this run did.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The pool.
      type: str
    wanted:
      description: O(pools[].count).
      type: int
    kept:
      description: Claims that existed and stay.
      type: list
      elements: str
    create:
      description: Claims created by this run.
      type: list
      elements: str
    surplus:
      description: Claims beyond the count.
      type: list
      elements: str
    release:
      description: Claims released by this run.
      type: list
      elements: str
    servers:
      description: Servers bound to the pool's claims after the wait.
      type: list
      elements: str
      returned: when waiting
results:
  description: One entry per object applied or removed, as M(c5c3.cobaltcore.apply) returns them.
  returned: always
  type: list
  elements: dict
ready:
  description: Readiness of every claim after the wait (see M(c5c3.cobaltcore.wait)).
  returned: when waiting
  type: list
  elements: dict
stale_reservations_released:
  description: Servers whose stale reservation for a claim bound to another server was cleared while waiting.
  returned: when waiting
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter


# How often a wait for the claims looks for a stale reservation (ironcore.stale_reservations).
STALE_CHECK_SECONDS = 10


class IronCoreServerClaimModule(KubeModule):
    argument_spec = dict(
        namespace=dict(type="str", required=True),
        pools=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            count=dict(type="int", required=True),
            selector=dict(type="dict", required=True),
            image=dict(type="str", required=True),
            power=dict(type="str", default="On", choices=["On", "Off"]),
            ignition=dict(type="str", no_log=True),
            ignition_secret=dict(type="str", no_log=False),
        )),
        release_surplus=dict(type="bool", default=False),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=900),
        wait_sleep=dict(type="int", default=2),
    )

    def run(self):
        namespace = self.params["namespace"]
        pools = [dict(p) for p in self.params["pools"]]
        for pool in pools:
            if pool["ignition"] and not pool["ignition_secret"]:
                pool["ignition_secret"] = naming.ignition_secret(pool["name"])
        problems = ironcore.pool_problems(pools)
        if problems:
            raise InputError(problems)
        servers = self.client.list(self.client.resource(ironcore.API_VERSION, "Server"))
        claim_type = self.client.resource(ironcore.API_VERSION, "ServerClaim")
        claims = self.client.list(claim_type, namespace, label_selector=naming.POOL_LABEL)
        plan, shortages = ironcore.plan_claims(pools, servers, claims, self.params["release_surplus"],
                                               self.maintenances())
        if shortages:
            if not self.check_mode:
                raise InputError(shortages)
            self.ansible.warn("in check mode, not failing (discovery may still add servers): " + "; ".join(shortages))
        for entry in plan:
            if entry["surplus"] and not entry["release"]:
                self.ansible.warn("pool %s holds %d claim(s) beyond its %d: %s; set release_surplus to release them"
                                  % (entry["name"], len(entry["surplus"]), entry["wanted"], ", ".join(entry["surplus"])))
        by_name = dict((p["name"], p) for p in pools)
        objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
        objects += [ironcore.ignition_secret_manifest(p, namespace) for p in pools if p["ignition"]]
        objects += [ironcore.claim_manifest(by_name[e["name"]], name, namespace) for e in plan for name in e["create"]]
        self.hide_secret_values(objects)
        applier = self.applier()
        self.results["results"] = self.record(applier.apply(objects))
        released = [ironcore.claim_manifest(by_name[e["name"]], name, namespace) for e in plan for name in e["release"]]
        if released:
            self.results["results"] += self.record(applier.remove(released))
        self.results["pools"] = plan
        if self.params["wait"] and not self.check_mode:
            refs = [{"apiVersion": ironcore.API_VERSION, "kind": "ServerClaim", "name": name, "namespace": namespace}
                    for e in plan for name in e["kept"] + e["create"]]
            ready = Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress).wait(
                refs, self.params["wait_timeout"], each_round=self.stale_reservations_released(namespace))
            self.results["ready"] = ready
            bound = dict((c["metadata"]["name"], ((c.get("spec") or {}).get("serverRef") or {}).get("name"))
                         for c in self.client.list(claim_type, namespace, label_selector=naming.POOL_LABEL))
            for entry in plan:
                entry["servers"] = sorted(bound[n] for n in entry["kept"] + entry["create"] if bound.get(n))

    def stale_reservations_released(self, namespace, every=STALE_CHECK_SECONDS):
        """A wait round's repair: the reservations metal-operator leaves for a claim bound to another server
        (ironcore.stale_reservations) are cleared, at most every `every` seconds, each named in a warning and in
        stale_reservations_released."""
        checked = {"at": time.time()}  # a claim that is not bound at once is no sign of a stale reservation yet
        released = self.results.setdefault("stale_reservations_released", [])

        def repair():
            if time.time() - checked["at"] < every:
                return
            checked["at"] = time.time()
            server_type = self.client.resource(ironcore.API_VERSION, "Server")
            claims = self.client.list(self.client.resource(ironcore.API_VERSION, "ServerClaim"), namespace,
                                      label_selector=naming.POOL_LABEL)
            for server in ironcore.stale_reservations(self.client.list(server_type), claims):
                ref = server["spec"]["serverClaimRef"]
                patch = {"metadata": {"resourceVersion": server["metadata"]["resourceVersion"]},
                         "spec": {"serverClaimRef": None}}
                status, unused = self.client.request("PATCH", server_type.path(None, server["metadata"]["name"]),
                                                     body=patch, content_type="application/merge-patch+json",
                                                     allow=(409,))
                if status == 409:
                    continue  # changed since it was read: judged again in the next round
                released.append(server["metadata"]["name"])
                self.ansible.warn("Server %s was reserved for ServerClaim %s/%s, which is bound to another server "
                                  "(metal-operator's claim race): its reservation was cleared"
                                  % (server["metadata"]["name"], ref.get("namespace"), ref.get("name")))
        return repair

    def maintenances(self):
        """ServerMaintenances: metal-operator binds no server that one of them refers to."""
        try:
            return self.client.list(self.client.resource(ironcore.API_VERSION, "ServerMaintenance"))
        except KubeError:
            return []  # a metal-operator without maintenance support


def main():
    IronCoreServerClaimModule()()


if __name__ == "__main__":
    main()
