# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The modules that act on OpenStack clusters by their ControlPlanes (providers/c5c3_api.py CLUSTER_OPTIONS).
    DOCUMENTATION = r"""
options:
  control_planes:
    description:
      - The OpenStack clusters' ControlPlanes (C(openstack/<region>) for the region's own cluster,
        C(openstack-<tenant>/<tenant>) for a tenant's).
    type: list
    elements: dict
    default: []
    suboptions:
      namespace:
        description: The ControlPlane's namespace.
        type: str
        required: true
      name:
        description: The ControlPlane's name.
        type: str
        required: true
  tenants:
    description:
      - Tenants' OpenStack clusters as well, by claim name (their ControlPlane C(<name>) in namespace
        C(openstack-<name>)).
    type: list
    elements: str
    default: []
"""
