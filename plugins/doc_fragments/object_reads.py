# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The reads of an info module (k8s/read.INFO_READ_SPEC): cluster_info, gardener_cluster_info.
    DOCUMENTATION = r"""
options:
  objects:
    description:
      - Objects to read, each by name or as a list (optionally by namespace and selectors).
      - A kind the server does not serve and a read it refuses are reported in that read's C(error), not as a
        failure. A Secret's data is never read, only, with O(objects[].metadata_only), its metadata.
    type: list
    elements: dict
    default: []
    suboptions:
      api_version:
        description: The object's C(apiVersion).
        type: str
        required: true
      kind:
        description: The object's kind; C(Secret) only as a list with O(objects[].metadata_only).
        type: str
        required: true
      name:
        description: Read this one object; without it, list them.
        type: str
      namespace:
        description: The namespace to read in; without it, a list covers every namespace.
        type: str
      label_selector:
        description: Only objects with these labels (a list only).
        type: str
      field_selector:
        description: Only objects with these fields (a list only).
        type: str
      metadata_only:
        description:
          - Only each object's C(apiVersion), C(kind) and C(metadata) (the API server's PartialObjectMetadata),
            which is what a read of Secrets may return.
        type: bool
        default: false
"""
