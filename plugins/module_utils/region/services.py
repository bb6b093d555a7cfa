# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack services of a CobaltCore OpenStack cluster: names, catalog types, ports, paths.

One table for the ControlPlane's composition and the Keystone catalog (seed 003), and one way to
render a service's URL from a template, so that the Keystone public endpoint the ControlPlane
names and the one the catalog registers are the same URL.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# The catalog of seed 003 (ports of its service CRs' status.endpoint and the Keystone
# authUrl path /v3). Octavia and Manila are named but not drawn in the seed: their ports
# and paths are the upstream defaults. Cortex is not an OpenStack service type of the
# service-types authority; "scheduler" is this collection's choice.
SERVICES = {
    "keystone": {"type": "identity", "port": 5000, "path": "/v3", "user": False,
                 "description": "OpenStack Identity (Keystone)"},
    "glance": {"type": "image", "port": 9292, "path": "", "user": True,
               "description": "OpenStack Image (Glance)"},
    "placement": {"type": "placement", "port": 8778, "path": "", "user": True,
                  "description": "OpenStack Placement"},
    "nova": {"type": "compute", "port": 8774, "path": "/v2.1", "user": True,
             "description": "OpenStack Compute (Nova)"},
    "neutron": {"type": "network", "port": 9696, "path": "", "user": True,
                "description": "OpenStack Networking (Neutron)"},
    "cinder": {"type": "volumev3", "port": 8776, "path": "/v3/%(project_id)s", "user": True,
               "description": "OpenStack Block Storage (Cinder)"},
    "octavia": {"type": "load-balancer", "port": 9876, "path": "", "user": True,
                "description": "OpenStack Load Balancing (Octavia)"},
    "manila": {"type": "sharev2", "port": 8786, "path": "/v2", "user": True,
               "description": "OpenStack Shared File Systems (Manila)"},
    "cortex": {"type": "scheduler", "port": 8080, "path": "", "user": True,
               "description": "CobaltCore scheduler (Cortex)"},
}
# The services the seed's ControlPlane enables by default; the rest are optional.
DEFAULT_SERVICES = ("keystone", "glance", "placement", "nova", "neutron", "cinder")

# Seed 003: https://glance.openstack.svc.cluster.local:9292, .../keystone...:5000/v3.
URL_TEMPLATE = "https://{name}.{namespace}.svc.cluster.local:{port}{path}"
URL_FIELDS = ("name", "type", "port", "path", "namespace", "region", "cluster")


def service_url(template, service, namespace, region, cluster):
    """A service's URL from a template with URL_FIELDS placeholders; service: an entry of SERVICES with its name."""
    return template.format(name=service["name"], type=service.get("type"), port=service.get("port"),
                           path=service.get("path", ""), namespace=namespace, region=region, cluster=cluster)


def identity_public_url(template, namespace, region, cluster):
    """Keystone's public URL by the region's template (None: URL_TEMPLATE), as the catalog renders it."""
    return service_url(template or URL_TEMPLATE, dict(SERVICES["keystone"], name="keystone"), namespace, region,
                       cluster)
