# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region report filter: a thin wrapper over module_utils.report.

Its documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import data, render_html, render_markdown
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import region_from_inventory
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error


@fails_on_input_error("cannot write the region report")
def region_report_filter(gathered, region, claims=None):
    if isinstance(region, dict) and "hostvars" in region:
        # Only the region model's variables of hostvars (cobaltcore_pool, cobaltcore_ironcore) are read.
        region = region_from_inventory(region)
    composed = data.compose(region, claims or [], gathered)
    return {"html": render_html.render(composed), "markdown": render_markdown.render(composed),
            "summary": composed["summary"]}


class FilterModule(object):
    """c5c3.cobaltcore region report filter."""

    def filters(self):
        return {"region_report": region_report_filter}
