#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_role_assignments
short_description: Grant users roles on projects in Keystone, many at once
version_added: 0.3.0
description:
  - Ensures each user holds the given roles on the given project (direct assignments), with one
    authentication and one lookup per name for the whole batch.
  - K-ORC v2.6.0, which manages the service users, has no RoleAssignment kind (it came after v2.6.0), so
    the CobaltCore Keystone bootstrap grants the service users' roles with this module.
  - Never revokes a role. Keystone being unreachable is retried, then fails naming the endpoint; users,
    projects or roles that do not exist are all reported together.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - openstack.cloud.openstack
  - c5c3.cobaltcore.keystone
  - c5c3.cobaltcore.kube_connection.keystone_modules
attributes:
  check_mode:
    description: Reports the assignments it would add; a user that does not exist yet is reported, not failed.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  assignments:
    description:
      - What to grant.
      - Required, here or per cluster in O(clusters[].params).
    type: list
    elements: dict
    suboptions:
      user:
        description: The user's name.
        type: str
        required: true
      user_domain:
        description: The user's domain (name or ID).
        type: str
        default: Default
      project:
        description: The project's name.
        type: str
        required: true
      project_domain:
        description: The project's domain (name or ID).
        type: str
        default: Default
      roles:
        description: The role names.
        type: list
        elements: str
        required: true
"""

EXAMPLES = r"""
- name: The service users' roles on the service project
  c5c3.cobaltcore.keystone_role_assignments:
    cloud: lab-admin
    assignments:
      - {user: glance, project: service, roles: [admin, service]}
      - {user: nova, project: service, roles: [admin, service]}
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
assignments:
  description: One entry per requested assignment, with the roles this run granted.
  returned: always
  type: list
  elements: dict
  contains:
    user:
      description: The user's name.
      type: str
    project:
      description: The project's name.
      type: str
    granted:
      description: Roles granted by this run (or that would be, in check mode).
      type: list
      elements: str
    missing_user:
      description: In check mode, true when the user does not exist yet.
      type: bool
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneError, KeystoneModule


class KeystoneRoleAssignmentsModule(KeystoneModule):
    argument_spec = dict(
        assignments=dict(type="list", elements="dict", options=dict(
            user=dict(type="str", required=True),
            user_domain=dict(type="str", default="Default"),
            project=dict(type="str", required=True),
            project_domain=dict(type="str", default="Default"),
            roles=dict(type="list", elements="str", required=True),
        )),
    )
    module_kwargs = dict(supports_check_mode=True)
    cluster_required = ("assignments",)

    def run(self):
        self.authorize()
        identity = self.conn.identity
        domains = self.keystone(lambda: list(identity.domains()), "listing domains")
        roles = dict((r.name, r) for r in self.keystone(lambda: list(identity.roles()), "listing roles"))
        projects, users, held = {}, {}, {}

        def domain_of(ref):
            return next((d for d in domains if ref in (d.name, d.id)), None)

        def project_named(name, domain):
            found = self.keystone(lambda: list(identity.projects(name=name, domain_id=domain.id)),
                                  "looking up project %s" % name)
            return found[0] if found else None

        def user_named(name, domain):
            # One listing per domain serves every user of the batch.
            if domain.id not in users:
                users[domain.id] = dict((u.name, u) for u in self.keystone(
                    lambda: list(identity.users(domain_id=domain.id)), "listing the users of domain %s" % domain.name))
            return users[domain.id].get(name)

        problems, results, todo = [], [], []
        for item in self.params["assignments"]:
            entry = {"user": item["user"], "project": item["project"], "granted": []}
            results.append(entry)
            user_domain, project_domain = domain_of(item["user_domain"]), domain_of(item["project_domain"])
            for ref, found in ((item["user_domain"], user_domain), (item["project_domain"], project_domain)):
                if found is None:
                    problems.append("domain %s does not exist" % ref)
            missing_roles = [name for name in item["roles"] if name not in roles]
            problems.extend("role %s does not exist" % name for name in missing_roles)
            if user_domain is None or project_domain is None or missing_roles:
                continue
            key = (project_domain.id, item["project"])
            if key not in projects:
                projects[key] = project_named(item["project"], project_domain)
            project = projects[key]
            user = user_named(item["user"], user_domain)
            if user is None and self.check_mode:
                entry.update(missing_user=True, granted=list(item["roles"]))
                continue
            if user is None:
                problems.append("user %s does not exist in domain %s" % (item["user"], user_domain.name))
            if project is None:
                problems.append("project %s does not exist in domain %s" % (item["project"], project_domain.name))
            if user is None or project is None:
                continue
            if project.id not in held:
                assignments = self.keystone(lambda: list(identity.role_assignments(scope_project_id=project.id)),
                                            "listing the role assignments on project %s" % project.name)
                held[project.id] = set((a.user["id"], a.role["id"]) for a in assignments if a.user)
            for name in item["roles"]:
                if (user.id, roles[name].id) not in held[project.id]:
                    entry["granted"].append(name)
                    todo.append((project, user, roles[name]))
        if problems:
            raise KeystoneError("cannot grant the roles, nothing was changed: %s" % "; ".join(sorted(set(problems))))
        self.results["assignments"] = results
        self.results["changed"] = bool(todo) or any(entry.get("missing_user") for entry in results)
        if self.check_mode:
            return
        for project, user, role in todo:
            self.keystone(lambda: self.conn.identity.assign_project_role_to_user(project, user, role),
                          "granting role %s to user %s on project %s" % (role.name, user.name, project.name))


def main():
    KeystoneRoleAssignmentsModule()()


if __name__ == "__main__":
    main()
