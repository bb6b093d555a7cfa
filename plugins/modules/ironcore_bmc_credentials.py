#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ironcore_bmc_credentials
short_description: Rotate the BMCs' passwords to the inventory's without a refused login
version_added: 0.6.0
description:
  - For each BMCSecret of O(secrets) whose password on the IronCore cluster differs from the given one, sets the given
    password on every Redfish BMC of O(bmcs) that uses it, through the BMC's AccountService (as metal-operator's
    BMCUser controller manages accounts), and then writes the BMCSecret. metal-operator's BMCUser, which rotates
    passwords on its own, is deprecated in v0.7.0 and never switches a BMC's C(bmcSecretRef).
  - The BMCSecret always holds a login every BMC accepts, as metal-operator reads it for each request. C(start) -
    with the BMCSecret's login, a handover account O(handover_username) with the new password and the main account's
    role on every BMC; the BMCSecret switches to it. C(switch-back) - after O(grace) seconds, the main account's
    password set on every BMC; the BMCSecret switches back to the main account with the new password. C(finish) -
    after O(grace) seconds, the handover account deleted on every BMC; the old password is refused from then on, which
    is checked.
  - A run interrupted anywhere goes on from the step the BMCSecret shows. A BMCSecret that holds the given login and no
    handover account left is not written (C(changed=false)).
  - Before the first write every BMC must accept the BMCSecret's login, have the main account and take the new
    password's length (its AccountService's C(MinPasswordLength), C(MaxPasswordLength)); otherwise the module fails
    naming each BMC, and nothing is written. A BMCSecret that names another user than the given one is refused (a
    rotation changes only the password); one that does not exist yet is left to M(c5c3.cobaltcore.ironcore_bmc).
  - Passwords are masked from the moment they are read; results carry names and steps only.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description: Reads the BMCSecrets and logs in to the BMCs (read only); reports each BMCSecret's next step.
    support: full
  diff_mode:
    description: Not supported; the BMCSecrets hold only credentials.
    support: none
options:
  secrets:
    description: The BMC credentials, as M(c5c3.cobaltcore.ironcore_bmc) takes them (filter C(ironcore_bmc_secrets)).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The BMCSecret.
        type: str
        required: true
      username:
        description: The BMCs' main account.
        type: str
        required: true
      password:
        description: The password the main account gets.
        type: str
        required: true
  bmcs:
    description:
      - The BMCs, as M(c5c3.cobaltcore.ironcore_bmc) takes them (filter C(ironcore_bmcs)); those whose C(secret) is a
        rotated BMCSecret and whose protocol is Redfish get the new password.
    type: list
    elements: dict
    required: true
  handover_username:
    description: The account that holds the new password while the main account's changes; deleted at the end.
    type: str
    default: c5c3-handover
  grace:
    description: Seconds the consumers get to read a switched BMCSecret before the login it replaced changes.
    type: int
    default: 10
  bmc_validate_certs:
    description: Verify the BMCs' TLS certificates.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Rotate the BMC passwords to the inventory's
  c5c3.cobaltcore.ironcore_bmc_credentials:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    secrets: "{{ cobaltcore_bmc_credentials | c5c3.cobaltcore.ironcore_bmc_secrets }}"
    bmcs: "{{ cobaltcore_bmcs | c5c3.cobaltcore.ironcore_bmcs }}"
"""

RETURN = r"""
secrets:
  description: Per BMCSecret, names only.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The BMCSecret.
      type: str
    steps:
      description: The steps taken (in check mode - the next one), among C(start), C(switch-back), C(finish).
      type: list
      elements: str
    bmcs:
      description: The BMCs that use it.
      type: list
      elements: str
    handover_deleted:
      description: The BMCs whose handover account was deleted.
      type: list
      elements: str
"""

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore, redfish


class IronCoreBMCCredentialsModule(KubeModule):
    argument_spec = dict(
        secrets=dict(type="list", elements="dict", required=True, no_log=False, options=dict(
            name=dict(type="str", required=True),
            username=dict(type="str", required=True),
            password=dict(type="str", required=True, no_log=True),
        )),
        bmcs=dict(type="list", elements="dict", required=True),
        handover_username=dict(type="str", default=ironcore.HANDOVER_USERNAME),
        grace=dict(type="int", default=10),
        bmc_validate_certs=dict(type="bool", default=True),
    )

    def run(self):
        secrets, bmcs = self.params["secrets"], self.params["bmcs"]
        problems = ironcore.bmc_problems(bmcs, secrets)
        if any(s["username"] == self.params["handover_username"] for s in secrets):
            problems.append(problem("handover_username", "must differ from every main account's username"))
        if problems:
            raise InputError(problems)
        stored = self.client.resource(ironcore.API_VERSION, "BMCSecret")
        plans = []
        for secret in secrets:
            live = self.client.get(stored, secret["name"])
            users = [b for b in bmcs if b["secret"] == secret["name"] and (b.get("protocol") or "Redfish") == "Redfish"]
            if live is None or not users:
                continue
            login = ironcore.secret_login(live)
            self.hide(login[1])
            plans.append((secret, login, ironcore.rotation_step(secret, login, self.params["handover_username"]),
                          users))
        self.check_before_writing(plans)
        self.results["secrets"] = []
        for plan in plans:
            try:
                self.results["secrets"].append(self.rotate(*plan))
            except redfish.RedfishError as exc:
                self.fail("the rotation of BMCSecret %s stopped: %s; the next run goes on from the step the BMCSecret "
                          "shows" % (plan[0]["name"], exc), secrets=self.results["secrets"])

    def session(self, bmc, login):
        return redfish.Session(ironcore.bmc_url(bmc), *login, validate_certs=self.params["bmc_validate_certs"])

    @staticmethod
    def systems(bmc):
        return ironcore.bmc_url(bmc) + redfish.SYSTEMS

    def login_problems(self, logins):
        return redfish.login_problems(logins, validate_certs=self.params["bmc_validate_certs"])

    def check_before_writing(self, plans):
        """Every BMC of a rotation that starts accepts the BMCSecret's login, has the main account and takes the new
        password; of one under way, accepts the handover login. InputError naming every BMC that does not."""
        problems = []
        for secret, login, step, users in plans:
            for bmc in users:
                where = "bmcs: BMC %s with BMCSecret %s" % (bmc["name"], secret["name"])
                try:
                    session = self.session(bmc, login)
                    unused, accounts = session.accounts()
                    if step == "start":
                        why = ironcore.password_problem(secret["password"], session.account_service())
                        if why:
                            problems.append("%s %s" % (where, why))
                    if redfish.find_account(accounts, secret["username"]) is None:
                        problems.append("%s has no account %s" % (where, secret["username"]))
                except redfish.RedfishError as exc:
                    problems.append("%s refuses the BMCSecret's login or cannot be reached (%s)" % (where, exc))
        if problems:
            raise InputError(problems)

    def rotate(self, secret, login, step, users):
        """The steps from step on; in check mode only the next one is reported."""
        result = {"name": secret["name"], "steps": [step], "bmcs": [b["name"] for b in users], "handover_deleted": []}
        if self.check_mode:
            if step == "finish":
                result["handover_deleted"] = self.handovers(secret, users)
            result["changed"] = step != "finish" or bool(result["handover_deleted"])
            self.results["changed"] = self.results.get("changed") or result["changed"]
            return result
        wanted = (secret["username"], secret["password"])
        handover = (self.params["handover_username"], secret["password"])
        if step == "start":
            for bmc in users:
                session = self.session(bmc, login)
                collection, accounts = session.accounts()
                main = redfish.find_account(accounts, secret["username"])
                found = redfish.find_account(accounts, handover[0])
                if found is None:
                    session.create_account(collection, handover[0], handover[1], main.get("RoleId") or "Administrator")
                else:
                    session.set_password(found, handover[1])
            self.switch(secret, users, handover)
            step = "switch-back"
            result["steps"].append(step)
        if step == "switch-back":
            current = handover if login[0] != handover[0] else login
            taking = self.login_problems([(b["name"], self.systems(b)) + wanted for b in users])
            for bmc in users:
                if bmc["name"] not in taking:
                    continue  # set before an interruption
                session = self.session(bmc, current)
                unused, accounts = session.accounts()
                session.set_password(redfish.find_account(accounts, secret["username"]), secret["password"])
            self.switch(secret, users, wanted)
            result["steps"].append("finish")
        result["handover_deleted"] = self.handovers(secret, users, delete=True)
        old = [login[1]] if login[0] == secret["username"] and login[1] != secret["password"] else []
        self.refuse_unless_gone(secret, users, old)
        result["changed"] = len(result["steps"]) > 1 or bool(result["handover_deleted"])
        self.results["changed"] = self.results.get("changed") or result["changed"]
        return result

    def switch(self, secret, users, login):
        """The BMCSecret to login once every BMC accepts it; then the grace."""
        problems = self.login_problems([(b["name"], self.systems(b)) + login for b in users])
        if problems:
            raise InputError(["bmcs: BMC %s with BMCSecret %s %s (nothing switched; the next run goes on from here)"
                              % (name, secret["name"], why) for name, why in sorted(problems.items())])
        self.applier().apply([ironcore.bmc_secret_manifest(dict(secret, username=login[0], password=login[1]))])
        time.sleep(max(self.params["grace"], 0))

    def handovers(self, secret, users, delete=False):
        """The BMCs that still have the handover account (deleted with delete)."""
        found = []
        for bmc in users:
            session = self.session(bmc, (secret["username"], secret["password"]))
            unused, accounts = session.accounts()
            account = redfish.find_account(accounts, self.params["handover_username"])
            if account is not None:
                if delete:
                    session.delete_account(account)
                found.append(bmc["name"])
        return found

    def refuse_unless_gone(self, secret, users, old_passwords):
        """Fail naming each BMC that still accepts an old password or the handover account."""
        logins = [((b["name"], "the old password"), self.systems(b), secret["username"], old)
                  for b in users for old in old_passwords]
        logins += [((b["name"], "the handover account"), self.systems(b), self.params["handover_username"],
                    secret["password"]) for b in users]
        found = self.login_problems(logins)
        accepted = sorted(login[0] for login in logins
                          if not (found.get(login[0]) or "").startswith("refuses the credentials"))
        if accepted:
            raise InputError(["bmcs: BMC %s with BMCSecret %s still accepts %s or was not reached"
                              % (name, secret["name"], what) for name, what in accepted])


def main():
    IronCoreBMCCredentialsModule()()


if __name__ == "__main__":
    main()
