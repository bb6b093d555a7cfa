# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Under CI (COBALTCORE_CI=1, set by .ci/run) a test that lacks what it needs fails instead of skipping."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

import pytest

from conftest import CI_VARIABLE, REPO, go_module_dir

MISSING = ("example.invalid/cobaltcore/Missing", "v0.0.1")


@pytest.fixture
def module_cache(tmp_path, monkeypatch):
    """An empty Go module cache, and no way to download into it."""
    cache = tmp_path / "gomodcache"
    cache.mkdir()
    monkeypatch.setenv("GOMODCACHE", str(cache))
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.setenv("GOFLAGS", "")
    return cache


def test_ci_run_sets_the_variable():
    with open(os.path.join(REPO, ".ci", "run")) as handle:
        script = handle.read()
    assert re.search(r"^export %s=1$" % CI_VARIABLE, script, re.M), script
    # Set before the tests run.
    assert script.index("export %s=1" % CI_VARIABLE) < script.index("\nmake test")


def test_outside_ci_a_missing_module_skips_with_its_reason(module_cache, monkeypatch):
    monkeypatch.delenv(CI_VARIABLE, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        go_module_dir(*MISSING)
    message = str(skipped.value)
    assert "example.invalid/cobaltcore/Missing@v0.0.1 is not in the Go module cache" in message
    assert "make lab-up" in message and "%s=1" % CI_VARIABLE in message


def test_under_ci_a_missing_module_that_cannot_be_downloaded_fails(module_cache, monkeypatch):
    monkeypatch.setenv(CI_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        go_module_dir(*MISSING)
    assert "%s=1: example.invalid/cobaltcore/Missing@v0.0.1 is not in the Go module cache and cannot be " \
           "downloaded" % CI_VARIABLE in str(failed.value)


@pytest.mark.parametrize("ci", ["", "1"])
def test_a_cached_module_is_found_by_its_escaped_path(module_cache, monkeypatch, ci):
    monkeypatch.setenv(CI_VARIABLE, ci)
    extracted = module_cache / "example.invalid" / "cobaltcore" / "!missing@v0.0.1"
    extracted.mkdir(parents=True)
    assert go_module_dir(*MISSING) == str(extracted)


def test_no_other_test_skips():
    """A skip anywhere else would pass CI silently; conftest's go_module_dir is the one place that may skip."""
    skipping = re.compile(r"pytest\.skip\(|\.skipif\(|importorskip\(|mark\.skip\b|mark\.xfail\b|pytest\.xfail\(")
    found = []
    for path in glob.glob(os.path.join(REPO, "tests", "**", "*.py"), recursive=True):
        if path in (os.path.join(REPO, "tests", "unit", "conftest.py"), os.path.abspath(__file__)):
            continue
        with open(path) as handle:
            found.extend("%s:%d" % (os.path.relpath(path, REPO), number)
                         for number, line in enumerate(handle, 1) if skipping.search(line))
    assert found == []
