# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region report filter: a thin wrapper over module_utils.report.

Its documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

data = lazy_module("report.data")
drift = lazy_module("report.drift")
render_html = lazy_module("report.render_html")
render_markdown = lazy_module("report.render_markdown")
mariadb = lazy_module("providers.mariadb")
ovn_backup = lazy_module("providers.ovn_backup")
run_lock = lazy_module("region.run_lock")
model = lazy_module("region.model")


@fails_on_input_error("cannot write the region report")
def region_report_filter(gathered, region, claims=None, drift_report=None):
    if isinstance(region, dict) and "hostvars" in region:
        # Only the region model's variables of hostvars (cobaltcore_pool, cobaltcore_ironcore) are read.
        region = model.region_from_inventory(region)
    composed = data.compose(region, claims or [], gathered)
    composed["drift"] = drift_report or None
    return {"html": render_html.render(composed), "markdown": render_markdown.render(composed),
            "summary": composed["summary"]}


# What a run makes that no inventory declares: the region's run lock, on-demand Backups and Restores.
def run_records():
    """The recognisers of the objects the collection's runs leave (the run lock, backup runs): not drift."""
    return (run_lock.is_lock, mariadb.run_record, ovn_backup.run_record)


@fails_on_input_error("cannot read drift.yml's task records")
def drift_records_filter(texts):
    return drift.parse_records(texts if isinstance(texts, list) else [texts])


def drift_kinds_filter(records, cluster):
    return drift.kinds_to_read(records, cluster)


@fails_on_input_error("cannot write the drift report")
def drift_report_filter(records, region, reads):
    report = drift.compose(region, records, drift.managed_of(reads), run_records())
    return {"report": report, "markdown": drift.markdown(report, render_markdown.cell),
            "summary": drift.summary_line(report),
            "lines": drift.report_lines(report)}


class FilterModule(object):
    """c5c3.cobaltcore region report filter."""

    def filters(self):
        return {"region_report": region_report_filter, "drift_records": drift_records_filter,
                "drift_kinds": drift_kinds_filter, "drift_report": drift_report_filter}
