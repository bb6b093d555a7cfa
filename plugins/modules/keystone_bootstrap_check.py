#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_bootstrap_check
short_description: Check in Keystone what keystone-manage bootstrap created
version_added: 0.3.0
description:
  - After the C(Keystone) CR reports C(BootstrapReady), checks in Keystone itself that the bootstrap created
    what K-ORC is going to import (seed 003, "Bootstrap Resources") - the domain, the projects, the roles -
    and that the admin user holds the admin role on the admin project.
  - Authenticates as the bootstrap admin, usually with O(secret_auth) (the password stays in its Secret).
  - Fails with one message listing everything that is missing; Keystone being unreachable is retried, then
    fails naming the endpoint; refused credentials fail at once.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - openstack.cloud.openstack
  - c5c3.cobaltcore.keystone
  - c5c3.cobaltcore.kube_connection.keystone_modules
attributes:
  check_mode:
    description: Read-only; runs the same checks.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
options:
  domain:
    description: The domain the bootstrap created (or found).
    type: str
    default: Default
  projects:
    description: Projects that must exist in O(domain).
    type: list
    elements: str
    default: [admin]
  roles:
    description: Roles that must exist (global roles).
    type: list
    elements: str
    default: [admin, member, reader, service]
  admin_user:
    description:
      - The bootstrap admin, a user of O(domain), who must hold the C(admin) role on the first of O(projects)
        (directly, through a group or inherited). Checked by name, whichever user the module authenticates as.
    type: str
    default: admin
"""

EXAMPLES = r"""
- name: Check the bootstrap of the region's Keystone
  c5c3.cobaltcore.keystone_bootstrap_check:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    secret_auth:
      auth_url: http://keystone.openstack.svc.cluster.local:5000/v3
      secret_namespace: openstack
      secret_name: keystone-admin-credentials
    projects: [admin]
    roles: [admin, member, reader, service]
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
domain_id:
  description: The ID of O(domain).
  returned: success
  type: str
project_ids:
  description: The IDs of O(projects), by name.
  returned: success
  type: dict
role_ids:
  description: The IDs of O(roles), by name.
  returned: success
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneError, KeystoneModule


class KeystoneBootstrapCheckModule(KeystoneModule):
    argument_spec = dict(
        domain=dict(type="str", default="Default"),
        projects=dict(type="list", elements="str", default=["admin"]),
        roles=dict(type="list", elements="str", default=["admin", "member", "reader", "service"]),
        admin_user=dict(type="str", default="admin"),
    )
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        self.authorize()
        identity = self.conn.identity
        problems = []
        name = self.params["domain"]
        domains = self.keystone(lambda: list(identity.domains(name=name)), "looking up domain %s" % name)
        domain = domains[0] if domains else None
        projects = {}
        if domain is None:
            problems.append("domain %s does not exist" % name)
        else:
            found = dict((p.name, p) for p in self.keystone(lambda: list(identity.projects(domain_id=domain.id)),
                                                            "listing the projects of domain %s" % name))
            projects = dict((p, found[p]) for p in self.params["projects"] if p in found)
            problems.extend("project %s does not exist in domain %s" % (p, name)
                            for p in self.params["projects"] if p not in found)
        roles = dict((r.name, r) for r in self.keystone(lambda: list(identity.roles()), "listing roles"))
        problems.extend("role %s does not exist" % r for r in self.params["roles"] if r not in roles)
        admin_project = self.params["projects"][0] if self.params["projects"] else None
        if admin_project in projects and "admin" in roles:
            problems.extend(self.check_admin(domain, projects[admin_project], roles["admin"]))
        if problems:
            raise KeystoneError("%s: the bootstrap did not create what K-ORC imports (%d problem(s)):\n%s" % (
                self._where(), len(problems), "\n".join("- " + p for p in problems)), problems=problems)
        self.results.update(domain_id=domain.id,
                            project_ids=dict((p, projects[p].id) for p in projects),
                            role_ids=dict((r, roles[r].id) for r in self.params["roles"]))

    def check_admin(self, domain, project, role):
        """Problems of the named admin user: missing, or without the admin role on the admin project."""
        name = self.params["admin_user"]
        identity = self.conn.identity
        users = self.keystone(lambda: list(identity.users(name=name, domain_id=domain.id)), "looking up user %s" % name)
        if not users:
            return ["user %s does not exist in domain %s" % (name, domain.name)]
        assignments = self.keystone(lambda: list(identity.role_assignments(
            user_id=users[0].id, scope_project_id=project.id, effective=True)),
            "listing the role assignments of user %s" % name)
        if any(a.role and a.role.get("id") == role.id for a in assignments):
            return []
        return ["user %s holds no admin role on project %s" % (name, project.name)]


def main():
    KeystoneBootstrapCheckModule()()


if __name__ == "__main__":
    main()
