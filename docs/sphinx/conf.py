# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# Sphinx settings of `make docs`: the RST antsibull-docs writes from the plugins' and roles' own docs,
# and the guides of docs/ (Markdown, read by myst-parser through docs/docsite/rst/).

project = "c5c3.cobaltcore"
copyright = "CobaltCore contributors"  # noqa: A001 (Sphinx's name)
title = "CobaltCore collection"
html_short_title = "CobaltCore collection"

extensions = ["sphinx_antsibull_ext", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
pygments_style = "ansible"
highlight_language = "YAML+Jinja"

html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
html_theme_options = {"display_version": False}

# No intersphinx: the machines that build this reach no documentation site. The guides link to files of
# the repository (code, other guides by file name); myst reports those it cannot resolve as references.
suppress_warnings = ["myst.xref_missing", "myst.header", "misc.highlighting_failure"]
myst_heading_anchors = 3
default_role = "any"
