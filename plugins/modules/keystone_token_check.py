#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_token_check
short_description: Check that Keystone issues a token for a cloud's credentials
version_added: 0.6.0
description:
  - Asks Keystone for a token with the module's credentials (usually O(cloud), a cloud of C(clouds.yaml)) and
    reports whom and what it was issued for, and until when. The token itself is never returned.
  - The preflight's check of the region Keystone's admin cloud. Like the collection's other modules it runs in
    the Ansible worker when the task runs on the controller, so the check costs one request to Keystone, not
    a Python interpreter that imports openstacksdk.
  - Keystone being unreachable is retried (O(connect_retries)), then fails naming the endpoint; refused
    credentials fail at once, naming the endpoint and the cloud.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - openstack.cloud.openstack
  - c5c3.cobaltcore.keystone
  - c5c3.cobaltcore.kube_connection.keystone_modules
attributes:
  check_mode:
    description: Read-only; runs the same check.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
"""

EXAMPLES = r"""
- name: Check that the region's admin cloud gets a token
  c5c3.cobaltcore.keystone_token_check:
    cloud: eu-de-1-admin
  environment:
    OS_CLIENT_CONFIG_FILE: /etc/openstack/clouds.yaml
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
auth_url:
  description: The Keystone endpoint that issued the token.
  returned: success
  type: str
  sample: https://keystone.eu-de-1.example.com/v3
user_id:
  description: The ID of the user the token was issued to.
  returned: success
  type: str
project_id:
  description: The ID of the project the token is scoped to; null for a token without a project scope.
  returned: success
  type: str
expires_at:
  description: When the token expires (RFC 3339, UTC).
  returned: success
  type: str
  sample: "2026-12-07T05:12:00Z"
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.timestamps import format_datetime
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneModule


class KeystoneTokenCheckModule(KeystoneModule):
    argument_spec = dict()
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        self.authorize()
        session = self.conn.session
        access = self.keystone(lambda: session.auth.get_access(session), "reading the token")
        self.results.update(auth_url=self.auth_url, user_id=access.user_id, project_id=access.project_id,
                            expires_at=format_datetime(access.expires) if access.expires else None)


def main():
    KeystoneTokenCheckModule()()


if __name__ == "__main__":
    main()
