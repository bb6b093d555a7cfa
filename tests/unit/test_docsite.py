# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documentation site (make docs): every guide of docs/ has its stub and its place in extra-docs.yml."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

import yaml

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs")


def test_every_guide_has_a_stub_and_a_toctree_entry():
    guides = sorted(f[:-3] for f in os.listdir(DOCS) if f.endswith(".md"))
    stubs = sorted(f[:-4] for f in os.listdir(os.path.join(DOCS, "docsite", "rst")))
    index = yaml.safe_load(open(os.path.join(DOCS, "docsite", "extra-docs.yml")))
    entries = [entry for section in index["sections"] for entry in section["toctree"]]
    assert guides == stubs
    assert sorted(entries) == guides


def test_each_stub_carries_its_guides_title():
    for name in os.listdir(os.path.join(DOCS, "docsite", "rst")):
        stub = open(os.path.join(DOCS, "docsite", "rst", name)).read()
        guide = open(os.path.join(DOCS, name[:-4] + ".md")).read()
        title = re.search(r"^# (.+)$", guide, re.M).group(1).strip()
        assert "\n%s\n%s\n" % (title, "=" * len(title)) in stub, name
