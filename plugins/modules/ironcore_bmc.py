#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ironcore_bmc
short_description: Register bare-metal BMCs with the IronCore metal-operator and wait for their servers
version_added: 0.2.0
description:
  - Applies C(BMCSecret)s (BMC credentials) and C(BMC)s (C(metal.ironcore.dev/v1alpha1)) in one call,
    then waits until every BMC reports C(status.state=Enabled) and condition C(Ready=True).
  - A BMC that metal-operator reports refusing its credentials (condition C(Ready=False), reason
    C(AuthenticationFailed), written without changing the state when the BMC answers 401 at the connection
    check) fails the task at once with the BMC's message.
  - With O(check_credentials), before anything is written, the module logs in to every BMC that is new or
    whose BMCSecret this call creates or changes (HTTP Basic authentication on C(/redfish/v1/Systems), as
    metal-operator logs in) and fails naming each BMC that refuses the credentials or cannot be reached.
    metal-operator v0.7.0 does not report such a refusal, as its connection check reads only the Redfish service
    root, which answers without a login, so a BMC keeps C(Ready=True) and a new one never becomes C(Enabled).
  - The metal-operator discovers the systems behind each BMC as C(Server)s and copies the BMC's labels
    to them, so O(bmcs[].labels) (for example the machine pool and class) is what server claims select.
    With O(wait_servers), the module waits until every BMC has at least one Server, none of them is
    still C(Initial) or C(Discovery), and none is C(Available) with a power off still under way.
  - All input is validated before the first write; every bad field is reported at once.
  - Passwords are never logged, returned or shown in diffs.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Sends the same requests as server-side dry runs and does not wait.
    support: full
  diff_mode:
    description: Field-level diff of BMCs and BMCSecrets; BMCSecret values are redacted.
    support: full
options:
  bmcs:
    description: The BMCs, one per machine (or per chassis controller).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Name of the BMC object.
        type: str
        required: true
      mac_address:
        description: MAC address of the BMC's management interface (C(spec.access.macAddress), immutable).
        type: str
        required: true
      ip:
        description: IP address of the BMC (C(spec.access.ip), immutable).
        type: str
        required: true
      protocol:
        description: Management protocol.
        type: str
        choices: [Redfish, IPMI, SSH]
        default: Redfish
      port:
        description: Port of the management protocol.
        type: int
      scheme:
        description: C(http) or C(https) for Redfish.
        type: str
        choices: [http, https]
      hostname:
        description: Host name of the BMC.
        type: str
      secret:
        description: Name of the BMCSecret with this BMC's credentials (one of O(secrets), or an existing one).
        type: str
        required: true
      labels:
        description: Labels of the BMC, which the metal-operator copies to every Server it discovers behind it.
        type: dict
        default: {}
  secrets:
    description: BMC credentials, each stored as a cluster-scoped C(BMCSecret).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Name of the BMCSecret.
        type: str
        required: true
      username:
        description: BMC user name.
        type: str
        required: true
      password:
        description: BMC password; never logged or returned.
        type: str
        required: true
  state:
    description: C(present) registers the BMCs, C(absent) removes the BMCs and the given BMCSecrets.
    type: str
    choices: [present, absent]
    default: present
  wait:
    description: Wait until every BMC is C(Enabled).
    type: bool
    default: true
  wait_servers:
    description:
      - Also wait for the BMCs' Servers to be discovered (implies O(wait)), and for a discovered (C(Available))
        Server to be powered off as metal-operator leaves it (a claim binds only a Server that is C(Off)).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for BMCs and Servers together.
    type: int
    default: 600
  wait_sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 2
  check_credentials:
    description:
      - Log in to new BMCs and to BMCs whose credentials change before writing anything (Redfish BMCs only).
      - Needs the host running the module to reach the BMCs' Redfish endpoints; turn it off where only the
        IronCore cluster reaches the BMC network (a refused password then goes unnoticed, see above).
    type: bool
    default: true
  bmc_validate_certs:
    description: Verify the BMCs' TLS certificates during O(check_credentials) (BMCs with O(bmcs[].scheme=https)).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Register the rack's BMCs and label their servers with machine pool and class
  c5c3.cobaltcore.ironcore_bmc:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    secrets:
      - name: bmc-rack-1
        username: "{{ vault_bmc_rack_1.username }}"
        password: "{{ vault_bmc_rack_1.password }}"
    bmcs:
      - name: rack-1-node-01
        mac_address: "52:54:00:10:00:01"
        ip: 10.10.0.11
        protocol: Redfish
        port: 443
        scheme: https
        secret: bmc-rack-1
        labels:
          c5c3.io/machine-pool: rack-1
          c5c3.io/machine-class: baremetal-kvm
"""

RETURN = r"""
bmcs:
  description: Every BMC with its state and the Servers discovered behind it.
  returned: success, not in check mode
  type: list
  elements: dict
  contains:
    name:
      description: The BMC.
      type: str
    state:
      description: C(status.state), for example C(Enabled).
      type: str
    servers:
      description: Names of its Servers.
      type: list
      elements: str
servers:
  description: The BMCs' Servers (see M(c5c3.cobaltcore.ironcore_server_info) for the fields).
  returned: when O(wait_servers) is true, not in check mode
  type: list
  elements: dict
credentials_checked:
  description: BMCs whose login this call tried before writing (new BMCs and changed credentials).
  returned: when O(check_credentials) is true and O(state=present)
  type: list
  elements: str
results:
  description: One entry per object applied or removed, as M(c5c3.cobaltcore.apply) returns them.
  returned: always
  type: list
  elements: dict
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
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore, redfish
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import problems_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter, WaitError


# A changed password of an existing BMCSecret is not yet the BMCs' own.
ROTATE_HINT = (" (a new password in the inventory is set on the BMCs first: playbooks/rotate.yml -e rotate=bmc-credentials,"
               " docs/rotation.md)")


class IronCoreBMCModule(KubeModule):
    argument_spec = dict(
        bmcs=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True),
            mac_address=dict(type="str", required=True),
            ip=dict(type="str", required=True),
            protocol=dict(type="str", default="Redfish", choices=list(ironcore.PROTOCOLS)),
            port=dict(type="int"),
            scheme=dict(type="str", choices=list(ironcore.SCHEMES)),
            hostname=dict(type="str"),
            secret=dict(type="str", required=True, no_log=False),
            labels=dict(type="dict", default={}),
        )),
        secrets=dict(type="list", elements="dict", default=[], no_log=False, options=dict(
            name=dict(type="str", required=True),
            username=dict(type="str", required=True),
            password=dict(type="str", required=True, no_log=True),
        )),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        wait=dict(type="bool", default=True),
        wait_servers=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=600),
        wait_sleep=dict(type="int", default=2),
        check_credentials=dict(type="bool", default=True),
        bmc_validate_certs=dict(type="bool", default=True),
    )

    def run(self):
        bmcs, secrets = self.params["bmcs"], self.params["secrets"]
        problems = ironcore.bmc_problems(bmcs, secrets)
        if problems:
            raise InputError(problems)
        objects = [ironcore.bmc_secret_manifest(s) for s in secrets] + [ironcore.bmc_manifest(b) for b in bmcs]
        self.hide_secret_values(objects)
        applier = self.applier()
        if self.params["state"] == "absent":
            self.results["results"] = self.record(applier.remove(objects))
            return
        if self.params["check_credentials"]:
            self.results["credentials_checked"] = self.check_logins(bmcs, secrets)
        self.results["results"] = self.record(applier.apply(objects))
        if self.check_mode:
            return
        started = time.time()
        if self.params["wait"] or self.params["wait_servers"]:
            self.wait_for_bmcs(bmcs)
        servers = self.servers()
        if self.params["wait_servers"]:
            servers = self.wait_for_discovery(self.params["wait_timeout"] - (time.time() - started))
            self.results["servers"] = ironcore.filter_servers(servers, bmcs=set(b["name"] for b in bmcs))
        states = dict((b["metadata"]["name"], (b.get("status") or {}).get("state"))
                      for b in self.client.list(self.client.resource(ironcore.API_VERSION, "BMC")))
        self.results["bmcs"] = [{"name": b["name"], "state": states.get(b["name"]),
                                 "servers": [s["metadata"]["name"] for s in ironcore.servers_of_bmc(servers, b["name"])]}
                                for b in bmcs]

    def check_logins(self, bmcs, secrets):
        """Before anything is written: every BMC that is new or gets changed credentials must accept them. A
        converged BMC stays Enabled and Ready after a password change (metal-operator's connection check reads
        only the service root, which needs no login), so a refused password would otherwise pass unnoticed."""
        current_secrets = self.objects("BMCSecret")
        stored = set(o["metadata"]["name"] for o in current_secrets)
        logins = ironcore.logins_to_check(bmcs, secrets, self.objects("BMC"), current_secrets)
        problems = redfish.login_problems(logins, validate_certs=self.params["bmc_validate_certs"])
        if problems:
            raise InputError(["bmcs[%d]: BMC %s with BMCSecret %s %s%s" % (
                index, b["name"], b["secret"], problems[b["name"]],
                ROTATE_HINT if b["secret"] in stored and problems[b["name"]].startswith("refuses") else "")
                for index, b in enumerate(bmcs) if b["name"] in problems])
        return sorted(login[0] for login in logins)

    def wait_for_bmcs(self, bmcs):
        """Wait for every BMC; a refused login (AuthenticationFailed) fails at once, naming the BMC."""
        refs = [ref_of(ironcore.bmc_manifest(b)) for b in bmcs]
        Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress).wait(
            refs, max(self.params["wait_timeout"], 0))

    def objects(self, kind):
        """Every object of a metal-operator kind; none in check mode while its CRD is not served yet (the
        metal-operator's CRDs may come with this very run)."""
        try:
            rtype = self.client.resource(ironcore.API_VERSION, kind)
        except KubeError:
            if self.check_mode:
                return []
            raise
        return self.client.list(rtype)

    def servers(self):
        return self.objects("Server")

    def wait_for_discovery(self, timeout):
        names = [b["name"] for b in self.params["bmcs"]]
        seen = {}
        restarted = []

        def attempt():
            servers = self.servers()
            restarted.extend(n for n in ironcore.discovery_restarts(seen, servers) if n not in restarted)
            problems = ironcore.discovery_problems(names, servers, time.time())
            offer(self.progress, lambda: problems_line("server discovery", problems))
            # A restart is the only sign metal-operator gives of a probe that never reports: fail now.
            return not problems or bool(restarted), (servers, problems)

        discovered, (servers, problems) = poll(attempt, timeout, self.params["wait_sleep"])
        if restarted and problems:
            raise WaitError("servers fell back from Discovery to Initial, so their probe agent did not report "
                            "within metal-operator's discovery timeout (it starts over endlessly; check the "
                            "server's PXE boot and its network to the registry): %s | %s"
                            % (", ".join(restarted), " | ".join(problems)),
                            [ironcore.server_summary(s) for s in servers])
        if not discovered:
            raise WaitError("servers not discovered after %ss: %s" % (self.params["wait_timeout"], " | ".join(problems)),
                            [ironcore.server_summary(s) for s in servers])
        return servers


def main():
    IronCoreBMCModule()()


if __name__ == "__main__":
    main()
