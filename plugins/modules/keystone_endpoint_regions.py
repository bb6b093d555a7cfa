#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_endpoint_regions
short_description: Put catalog endpoints into their Keystone region
version_added: 0.3.0
description:
  - K-ORC v2.6.0's C(Endpoint) has no region field and creates endpoints without one. Clients that name
    a region (every OpenStack service does, with C(region_name)) skip such endpoints, so the catalog
    K-ORC registers would be invisible to them.
  - This module finds each endpoint by service (name and type), interface and URL and sets its region
    when it differs; K-ORC never resets it (it only reconciles URL, interface and enabled).
  - The region must exist (C(keystone-manage bootstrap --bootstrap-region-id) creates it). Endpoints
    or services that do not exist are all reported together.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - openstack.cloud.openstack
  - c5c3.cobaltcore.keystone
  - c5c3.cobaltcore.kube_connection.keystone_modules
attributes:
  check_mode:
    description: Reports the endpoints it would move; a missing endpoint is reported, not failed.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  region:
    description:
      - The region the endpoints belong to.
      - Required, here or per cluster in O(clusters[].params).
    type: str
  endpoints:
    description:
      - The endpoints.
      - Required, here or per cluster in O(clusters[].params).
    type: list
    elements: dict
    suboptions:
      service:
        description: The service's name.
        type: str
        required: true
      type:
        description: The service's type.
        type: str
        required: true
      interface:
        description: The endpoint's interface.
        type: str
        required: true
        choices: [public, internal, admin]
      url:
        description: The endpoint's URL.
        type: str
        required: true
"""

EXAMPLES = r"""
- name: The catalog's endpoints in region eu-de-1
  c5c3.cobaltcore.keystone_endpoint_regions:
    cloud: eu-de-1-admin
    region: eu-de-1
    endpoints:
      - {service: glance, type: image, interface: public, url: "https://glance.openstack.svc.cluster.local:9292"}
      - {service: glance, type: image, interface: internal, url: "https://glance.openstack.svc.cluster.local:9292"}
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
moved:
  description: The endpoints whose region this run set (or would set, in check mode).
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The endpoint's ID.
      type: str
    service:
      description: The service's name.
      type: str
    interface:
      description: The interface.
      type: str
    url:
      description: The URL.
      type: str
    region:
      description: The region it had before (null for none).
      type: str
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneError, KeystoneModule


class KeystoneEndpointRegionsModule(KeystoneModule):
    argument_spec = dict(
        region=dict(type="str"),
        endpoints=dict(type="list", elements="dict", options=dict(
            service=dict(type="str", required=True),
            type=dict(type="str", required=True),
            interface=dict(type="str", required=True, choices=["public", "internal", "admin"]),
            url=dict(type="str", required=True),
        )),
    )
    module_kwargs = dict(supports_check_mode=True)
    cluster_required = ("region", "endpoints")

    def run(self):
        self.authorize()
        identity = self.conn.identity
        region = self.params["region"]
        problems = []
        if self.keystone(lambda: identity.find_region(region, ignore_missing=True), "looking up region %s" % region) \
                is None:
            problems.append("region %s does not exist in Keystone (keystone-manage bootstrap --bootstrap-region-id "
                            "creates it)" % region)
        services = self.keystone(lambda: list(identity.services()), "listing services")
        endpoints = self.keystone(lambda: list(identity.endpoints()), "listing endpoints")
        moved = []
        for wanted in self.params["endpoints"]:
            service_ids = [s.id for s in services if s.name == wanted["service"] and s.type == wanted["type"]]
            if not service_ids:
                problems.append("service %s (type %s) does not exist" % (wanted["service"], wanted["type"]))
                continue
            found = [e for e in endpoints if e.service_id in service_ids and e.interface == wanted["interface"]
                     and e.url == wanted["url"]]
            if not found:
                if not self.check_mode:
                    problems.append("service %s has no %s endpoint %s"
                                    % (wanted["service"], wanted["interface"], wanted["url"]))
                continue
            for endpoint in found:
                if endpoint.region_id != region:
                    moved.append({"id": endpoint.id, "service": wanted["service"], "interface": endpoint.interface,
                                  "url": endpoint.url, "region": endpoint.region_id})
        if problems:
            raise KeystoneError("cannot put the endpoints into region %s, nothing was changed: %s"
                                % (region, "; ".join(problems)))
        self.results["moved"] = moved
        self.results["changed"] = bool(moved)
        if self.check_mode:
            return
        for entry in moved:
            self.keystone(lambda: identity.update_endpoint(entry["id"], region_id=region),
                          "setting the region of endpoint %s" % entry["id"])


def main():
    KeystoneEndpointRegionsModule()()


if __name__ == "__main__":
    main()
