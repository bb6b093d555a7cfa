# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""K-ORC's manager gets the args of the Deployment its chart made, found by the chart's label."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab import korc  # noqa: E402  pylint: disable=wrong-import-position


def deployment(name, labels, args, replicas=1):
    """An Available Deployment (its pod Ready), or with replicas 0 one scaled to zero."""
    return {"metadata": {"name": name, "labels": labels, "generation": 1},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "manager", "args": args}]}}},
            "status": {"observedGeneration": 1, "availableReplicas": replicas,
                       "conditions": [{"type": "Available", "status": "True"}]}}


def test_the_charts_deployment_is_found_by_its_label_among_others():
    other = deployment("other", {"app.kubernetes.io/name": "something-else"}, ["--other"])
    chart = deployment("orc-controller-manager", {korc.CHART_LABEL[0]: korc.CHART_LABEL[1]}, ["--zap-log-level", 5])
    assert korc.args_of([other, chart]) == ["--zap-log-level", "5"]


def test_no_deployment_of_the_chart_means_none():
    assert korc.args_of([deployment("other", None, ["--other"])]) is None
    assert korc.args_of([]) is None


def test_a_chart_deployment_scaled_to_zero_means_none():
    labels = {korc.CHART_LABEL[0]: korc.CHART_LABEL[1]}
    assert korc.args_of([deployment("orc", labels, ["--zap-log-level", 5], replicas=0)]) is None


def test_a_chart_deployment_without_args_means_an_empty_list():
    assert korc.args_of([deployment("orc", {korc.CHART_LABEL[0]: korc.CHART_LABEL[1]}, None)]) == []
