#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_verify
short_description: Verify an OpenStack cluster's catalog, service users and credentials in Keystone itself
version_added: 0.3.0
description:
  - Checks in Keystone, not in K-ORC's status, what the Keystone bootstrap of one OpenStack cluster must
    have produced, and fails with one message listing every problem found.
  - The catalog lists every service (by name and type, enabled) with exactly one enabled public and one
    internal endpoint in the region, at the expected URLs.
  - Each service user exists, is enabled and holds its roles on the service project.
  - Each application credential Secret (C(<service>-keystone-credentials)) issues a token, scoped to the
    service project with the service's roles; so does K-ORC's own C(k-orc-clouds-yaml).
  - Read-only. Secret values are read from the control-plane cluster and never returned or printed.
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
    description: Not supported.
    support: none
options:
  namespace:
    description:
      - The OpenStack cluster's namespace on the control-plane cluster (where the Secrets are).
      - Required, here or per cluster in O(clusters[].params).
    type: str
  region:
    description:
      - The region every endpoint must be in.
      - Required, here or per cluster in O(clusters[].params).
    type: str
  domain:
    description: The domain of the service users and the service project.
    type: str
    default: Default
  project:
    description: The service project.
    type: str
    default: service
  services:
    description:
      - The services of the catalog (the C(services) of the C(keystone_catalog_plan) filter).
      - Required, here or per cluster in O(clusters[].params).
    type: list
    elements: dict
    suboptions:
      name:
        description: The service's name.
        type: str
        required: true
      type:
        description: The service's type.
        type: str
        required: true
      public_url:
        description: The public endpoint's URL.
        type: str
        required: true
      internal_url:
        description: The internal endpoint's URL.
        type: str
        required: true
      user:
        description: Whether the service has a service user and an application credential.
        type: bool
        default: false
      roles:
        description: The service user's roles on the service project.
        type: list
        elements: str
        default: []
      credentials_secret:
        description: The application credential Secret; C(<name>-keystone-credentials) when omitted.
        type: str
  korc_secret:
    description: K-ORC's clouds.yaml Secret; its credential must issue a token too. Empty to skip.
    type: str
    default: k-orc-clouds-yaml
  korc_cloud:
    description: The cloud in K-ORC's clouds.yaml.
    type: str
    default: openstack
"""

EXAMPLES = r"""
- name: Verify the region's catalog in Keystone
  c5c3.cobaltcore.keystone_verify:
    cloud: eu-de-1-admin
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack
    region: eu-de-1
    services: "{{ plan.services }}"
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
checked:
  description: How many services, endpoints, users and credentials were checked.
  returned: always
  type: dict
  sample: {"services": 6, "endpoints": 12, "users": 5, "credentials": 6}
problems:
  description: Every problem found (the task fails when there is one).
  returned: always
  type: list
  elements: str
"""

from concurrent.futures import ThreadPoolExecutor

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with Ansible
    yaml = None

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.secret_data import decoded
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import (
    KeystoneError, KeystoneModule, short_error)


def credential_of(values, cloud):
    """(auth_url, id, secret) from a Secret's clouds.yaml cloud, else its plain keys."""
    try:
        auth = yaml.safe_load(values.get(naming.KORC_CLOUDS_KEY) or "")["clouds"][cloud]["auth"]
        return auth.get("auth_url"), auth.get("application_credential_id"), auth.get("application_credential_secret")
    except Exception:  # no or another clouds.yaml: fall back to the plain keys
        return (values.get("auth_url"), values.get("application_credential_id"),
                values.get(naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY))


class KeystoneVerifyModule(KeystoneModule):
    argument_spec = dict(
        namespace=dict(type="str"),
        region=dict(type="str"),
        domain=dict(type="str", default="Default"),
        project=dict(type="str", default="service"),
        services=dict(type="list", elements="dict", options=dict(
            name=dict(type="str", required=True),
            type=dict(type="str", required=True),
            public_url=dict(type="str", required=True),
            internal_url=dict(type="str", required=True),
            user=dict(type="bool", default=False),
            roles=dict(type="list", elements="str", default=[]),
            credentials_secret=dict(type="str", no_log=False),
        )),
        korc_secret=dict(type="str", default=naming.KORC_CLOUDS_SECRET, no_log=False),
        korc_cloud=dict(type="str", default=naming.KORC_CLOUD_NAME),
    )
    module_kwargs = dict(supports_check_mode=True)
    cluster_required = ("namespace", "region", "services")

    def run(self):
        self.authorize()
        self.problems = []
        self.checked = {"services": 0, "endpoints": 0, "users": 0, "credentials": 0}
        identity = self.conn.identity
        domains = self.keystone(lambda: list(identity.domains(name=self.params["domain"])),
                                "looking up domain %s" % self.params["domain"])
        domain = domains[0] if domains else None
        project = None
        if domain is None:
            self.problems.append("domain %s does not exist" % self.params["domain"])
        else:
            projects = self.keystone(lambda: list(identity.projects(name=self.params["project"], domain_id=domain.id)),
                                     "looking up project %s" % self.params["project"])
            project = projects[0] if projects else None
            if project is None:
                self.problems.append("project %s does not exist in domain %s"
                                     % (self.params["project"], self.params["domain"]))
        self.check_catalog()
        users = [s for s in self.params["services"] if s["user"]]
        if users and domain is not None:
            roles = dict((r.id, r.name) for r in self.keystone(lambda: list(identity.roles()), "listing roles"))
            held = {}
            if project is not None:
                for a in self.keystone(lambda: list(identity.role_assignments(scope_project_id=project.id)),
                                       "listing the role assignments on project %s" % project.name):
                    if a.user:
                        held.setdefault(a.user["id"], set()).add(roles.get(a.role["id"]))
            accounts = dict((u.name, u) for u in self.keystone(lambda: list(identity.users(domain_id=domain.id)),
                                                               "listing the users of domain %s" % domain.name))
            for service in users:
                self.check_user(service, domain, project, held, accounts.get(service["name"]))
        # Token requests are independent: ask Keystone for them side by side, report in order.
        wanted = [("application credential of %s" % s["name"],
                   s["credentials_secret"] or naming.service_keystone_credentials_secret(s["name"]), s["name"], s)
                  for s in users]
        if self.params["korc_secret"]:
            wanted.append(("K-ORC's credentials", self.params["korc_secret"], self.params["korc_cloud"], None))
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(self.credential_token, what, secret, cloud) for what, secret, cloud, _s in wanted]
            for (what, _secret, _cloud, service), future in zip(wanted, futures):
                self.checked["credentials"] += 1
                access, problems = future.result()
                self.problems.extend(problems)
                if access is not None and service is not None:
                    self.check_credential_scope(service, project, access)
        self.results.update(checked=self.checked, problems=self.problems)
        if self.problems:
            raise KeystoneError("Keystone verification of namespace %s against %s found %d problem(s):\n%s" % (
                self.params["namespace"], self.auth_url, len(self.problems),
                "\n".join("- " + p for p in self.problems)), checked=self.checked, problems=self.problems)

    def check_catalog(self):
        region = self.params["region"]
        services = self.keystone(lambda: list(self.conn.identity.services()), "listing services")
        endpoints = self.keystone(lambda: list(self.conn.identity.endpoints()), "listing endpoints")
        for wanted in self.params["services"]:
            self.checked["services"] += 1
            found = [s for s in services if s.name == wanted["name"] and s.type == wanted["type"]]
            if not found:
                self.problems.append("the catalog has no service %s of type %s" % (wanted["name"], wanted["type"]))
                continue
            if len(found) > 1:
                self.problems.append("the catalog has %d services %s of type %s" % (len(found), wanted["name"],
                                                                                    wanted["type"]))
            if not all(s.is_enabled for s in found):
                self.problems.append("service %s is disabled" % wanted["name"])
            ids = set(s.id for s in found)
            for interface in ("public", "internal"):
                self.checked["endpoints"] += 1
                url = wanted["%s_url" % interface]
                mine = [e for e in endpoints if e.service_id in ids and e.interface == interface and e.is_enabled
                        and e.region_id == region]
                if not [e for e in mine if e.url == url]:
                    elsewhere = sorted("%s in region %s" % (e.url, e.region_id) for e in endpoints
                                       if e.service_id in ids and e.interface == interface)
                    self.problems.append("service %s has no enabled %s endpoint %s in region %s%s" % (
                        wanted["name"], interface, url, region,
                        " (it has: %s)" % ", ".join(elsewhere) if elsewhere else ""))
                elif len(mine) > 1:
                    self.problems.append("service %s has %d enabled %s endpoints in region %s (%s): clients pick any"
                                         % (wanted["name"], len(mine), interface, region,
                                            ", ".join(sorted(e.url for e in mine))))

    def check_user(self, service, domain, project, held, user):
        self.checked["users"] += 1
        if user is None:
            self.problems.append("service user %s does not exist in domain %s" % (service["name"], domain.name))
            return
        if not user.is_enabled:
            self.problems.append("service user %s is disabled" % service["name"])
        if project is None:
            return
        missing = [r for r in service["roles"] if r not in held.get(user.id, set())]
        if missing:
            self.problems.append("service user %s lacks roles %s on project %s" % (
                service["name"], ", ".join(missing), project.name))

    def credential_token(self, what, secret_name, cloud):
        """(AccessInfo or None, problems) of the credential a Secret holds."""
        live = self.read_secret(self.params["namespace"], secret_name)
        where = "Secret %s/%s" % (self.params["namespace"], secret_name)
        if live is None:
            return None, ["%s (%s) does not exist" % (where, what)]
        auth_url, credential_id, secret = credential_of(decoded(live), cloud)
        self.hide(secret)
        if not credential_id or not secret:
            return None, ["%s (%s) holds no application credential ID and secret" % (where, what)]
        try:
            return self.credential_access(auth_url or self.auth_url, credential_id, secret,
                                          "a token for application credential %s" % credential_id), []
        except KeystoneError as error:
            if error.details.get("status") in (401, 404):
                return None, ["%s (%s): application credential %s issues no token (HTTP 401)"
                              % (where, what, credential_id)]
            if "not reachable" not in str(error):
                return None, ["%s (%s): %s" % (where, what, short_error(error))]
            raise

    def check_credential_scope(self, service, project, access):
        if project is not None and access.project_id != project.id:
            self.problems.append("the application credential of %s is scoped to project %s, not %s" % (
                service["name"], access.project_id, project.name))
        missing = [r for r in service["roles"] if r not in (access.role_names or [])]
        if missing:
            self.problems.append("the application credential of %s lacks roles %s"
                                 % (service["name"], ", ".join(missing)))


def main():
    KeystoneVerifyModule()()


if __name__ == "__main__":
    main()
