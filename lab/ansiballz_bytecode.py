# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A bytecode cache for the venv's Python: the AnsiballZ modules' sources and the collection loader's.

Every module Ansible runs is an AnsiballZ zip, and Python compiles each source it imports from a
zip anew (zipimport writes no .pyc): about 0.15 CPU-s per module run for ansible.module_utils.basic
and the collection's module_utils, the largest part of a module run that only reads. This hook
keeps the compiled code of each source text, keyed by its SHA-256 and the interpreter's magic
number, so an unchanged source is compiled once per machine instead of once per module run.

Nothing else changes: zipimport still finds and reads every file in the zip (a module_utils the
zip lacks still fails to import), the code is the compiler's for that exact text, and its file
names are set to the zip's paths (tracebacks name the running module as before). Any problem
with the cache falls back to compiling.

`make setup` installs it into the venv (`python lab/ansiballz_bytecode.py install`): this file
as a module of site-packages and a .pth that imports it when the interpreter starts. The cache
lives in the venv (`<venv>/ansiballz-bytecode`), as the venv's own bytecode does.
`COBALTCORE_ANSIBALLZ_BYTECODE=0` in the environment turns it off for a run.

The controller has the same cost: ansible-core's collection loader compiles every plugin and
module_utils source of a collection when it imports it (it writes no .pyc either), and each of
ansible-playbook's forked workers imports them anew; a task whose arguments use one of the
collection's filters imports the filter files until it finds the filter. The same cache serves
that loader's compile (the same call as zipimport's), patched when the loader's module is imported.
"""
from __future__ import annotations

import builtins
import hashlib
import importlib.util
import marshal
import os
import sys
import time
import zipimport

import _imp
from importlib.util import MAGIC_NUMBER

MODULE = "cobaltcore_ansiballz_bytecode"
CACHE = os.path.join(sys.prefix, "ansiballz-bytecode")
KEEP_DAYS = 14  # `install` removes entries older than this (sources of earlier commits)
COLLECTION_LOADER = "ansible.utils.collection_loader._collection_finder"

_compile_source = zipimport._compile_source  # pylint: disable=protected-access


def _key(source):
    digest = hashlib.sha256(MAGIC_NUMBER + bytes([sys.flags.optimize]) + source)
    return digest.hexdigest()


def cached_compile(pathname, source):
    """zipimport's compile of `source`, from the cache when an earlier run compiled the same text."""
    path = os.path.join(CACHE, _key(source))
    try:
        with open(path, "rb") as handle:
            code = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        code = _compile_source(pathname, source)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            partial = "%s.%d.tmp" % (path, os.getpid())
            with open(partial, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(partial, path)  # whole or not at all, for processes reading at the same time
        except OSError:
            pass
        return code
    # The cached code names the zip of the run that compiled it; name this run's instead.
    _imp._fix_co_filename(code, pathname)  # pylint: disable=protected-access
    return code


def loader_compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1):
    """`compile` as the collection loader's module sees it: its one call (a file's bytes, exec, no
    inherited flags) is zipimport's compile and comes from the cache; any other call is the builtin's."""
    if isinstance(source, bytes) and mode == "exec" and not flags and dont_inherit and optimize == -1:
        return cached_compile(filename, source)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize)


class CollectionLoaderPatch:
    """A meta path finder that only watches for the collection loader's module and gives it `loader_compile`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != COLLECTION_LOADER:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            module.compile = loader_compile  # a module global comes before the builtin

        spec.loader.exec_module = exec_and_patch
        return spec


def enable():
    """Called by the .pth at start-up; COBALTCORE_ANSIBALLZ_BYTECODE=0 leaves both compiles as they are (to compare)."""
    if os.environ.get("COBALTCORE_ANSIBALLZ_BYTECODE", "1") != "0":
        zipimport._compile_source = cached_compile  # pylint: disable=protected-access
        if COLLECTION_LOADER not in sys.modules:
            sys.meta_path.insert(0, CollectionLoaderPatch())


def install(purelib):
    """This file as a module of `purelib`, a .pth that imports it, and old cache entries pruned."""
    with open(__file__, "rb") as handle:
        text = handle.read()
    pth = ("import {0}; {0}.enable()\n".format(MODULE)).encode()
    for path, content in ((os.path.join(purelib, MODULE + ".py"), text), (os.path.join(purelib, MODULE + ".pth"), pth)):
        with open(path, "wb") as handle:
            handle.write(content)
    if os.path.isdir(CACHE):
        limit = time.time() - KEEP_DAYS * 86400
        for entry in os.scandir(CACHE):
            if entry.stat().st_mtime < limit:
                os.unlink(entry.path)


if __name__ == "__main__":
    if sys.argv[1:2] != ["install"]:
        sys.exit("usage: python lab/ansiballz_bytecode.py install")
    import sysconfig
    install(sysconfig.get_paths()["purelib"])
