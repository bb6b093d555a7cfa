# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The options every Keystone module of the collection adds to openstack.cloud's.
    DOCUMENTATION = r"""
options:
  secret_auth:
    description:
      - Password authentication whose password is read from a Kubernetes Secret on the control-plane cluster,
        so it never passes through Ansible variables. Used instead of O(cloud) and O(auth), for example
        with the C(keystone-admin-credentials) Secret of the Keystone bootstrap.
      - The password is masked in everything the module returns or logs.
    type: dict
    suboptions:
      auth_url:
        description: Keystone's URL (C(status.endpoint) of the C(Keystone) CR).
        type: str
        required: true
      username:
        description: The user.
        type: str
        default: admin
      project_name:
        description: The project to scope the token to.
        type: str
        default: admin
      domain_name:
        description: The domain of the user and the project.
        type: str
        default: Default
      secret_namespace:
        description: The Secret's namespace.
        type: str
        required: true
      secret_name:
        description: The Secret holding the password.
        type: str
        required: true
      secret_key:
        description: The Secret's key holding the password.
        type: str
        default: password
      interface:
        description:
          - The catalog interface the module calls Keystone's identity API at once it has a token - the one
            whose URL is O(secret_auth.auth_url) (C(internal) for the C(Keystone) CR's C(status.endpoint)).
          - Omitted - O(interface).
        type: str
        choices: [public, internal, admin]
  clusters:
    description:
      - The batch form - the module's work for many OpenStack clusters in one run, each cluster with its own
        Keystone. Every entry is validated before the first cluster is touched; the clusters then run side by
        side, and every cluster's failure is reported together, naming the cluster (the others still run).
      - Results are in RV(clusters), one entry per cluster in this order.
      - Without it the module works on one cluster with its top-level options.
    type: list
    elements: dict
    suboptions:
      name:
        description: The OpenStack cluster's name (in results and messages); unique.
        type: str
        required: true
      secret_auth:
        description:
          - This cluster's admin, as O(secret_auth) (the password read from this cluster's Secret).
          - Omitted - the top-level O(secret_auth), O(cloud) or O(auth).
        type: dict
        suboptions:
          auth_url:
            description: Keystone's URL.
            type: str
            required: true
          username:
            description: The user.
            type: str
            default: admin
          project_name:
            description: The project to scope the token to.
            type: str
            default: admin
          domain_name:
            description: The domain of the user and the project.
            type: str
            default: Default
          secret_namespace:
            description: The Secret's namespace.
            type: str
            required: true
          secret_name:
            description: The Secret holding the password.
            type: str
            required: true
          secret_key:
            description: The Secret's key holding the password.
            type: str
            default: password
          interface:
            description: As O(secret_auth.interface).
            type: str
            choices: [public, internal, admin]
      params:
        description:
          - The module's own options for this cluster (not the connection or authentication options), validated
            like them; options not given here take their top-level values.
        type: dict
        default: {}
  connect_retries:
    description: Attempts for each Keystone call while Keystone is unreachable or answers 5xx.
    type: int
    default: 6
  connect_retry_delay:
    description: Seconds before the second attempt; doubled for each further one, at most 8.
    type: float
    default: 1.0
"""
