"""The lab's Helm chart repository, served on loopback: what Flux's HelmRepository will read."""

import hashlib

import pytest
import requests
import yaml

from regionlab import charts

pytestmark = pytest.mark.lab_only  # conftest.LAB_ONLY


def _get(path):
    session = requests.Session()
    session.trust_env = False
    answer = session.get(charts.URL + path, timeout=10)
    answer.raise_for_status()
    return answer.content


def test_the_served_index_lists_every_chart_with_its_digest(lab):
    assert lab["charts"]["ready"]
    index = yaml.safe_load(_get("index.yaml"))
    assert index["apiVersion"] == "v1"
    for entry in charts.real_entries():
        assert [v["version"] for v in index["entries"][entry["name"]]] == [entry["chart_version"]]
    for name in charts.made_entries():
        versions = index["entries"][name]
        version = str(yaml.safe_load((charts.SOURCES / name / "Chart.yaml").read_text())["version"])
        assert [v["version"] for v in versions] == [charts.next_patch(version), version]
        assert all(v["annotations"][charts.MADE_ANNOTATION] == "true" for v in versions)
    for versions in index["entries"].values():
        for version in versions:
            assert hashlib.sha256(_get(version["urls"][0])).hexdigest() == version["digest"]


def test_the_repository_is_not_rebuilt_when_nothing_changed(lab):
    assert charts.up_to_date()
    assert charts.build(log=lambda _: None) is False
