"""Stands in for ansible-test's downloaded get-pip bootstrap, which is not reachable here.

ansible-test runs it inside each fresh sanity venv with pip's install arguments: pip comes
from the interpreter's own ensurepip wheel, the requested versions from PyPI.
"""
import subprocess
import sys

IGNORED = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"],
                      stdout=subprocess.DEVNULL)
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet"]
                      + [arg for arg in sys.argv[1:] if arg not in IGNORED])
