"""Stand-in for the get-pip bootstrap script ansible-test downloads.

ansible-test fetches get-pip from a host this network cannot reach.  This
script does the same job with a pip that is already here: it runs the pip of
PIP_HOST_PYTHON (filled in by scripts/sanity.sh) against the new virtualenv
(`pip --python`), installing the requested packages from the package index.
get-pip's own flags (--no-setuptools, --no-wheel) are dropped.
"""
import subprocess
import sys

PIP_HOST_PYTHON = "@PIP_HOST_PYTHON@"
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([PIP_HOST_PYTHON, "-m", "pip", "--python", sys.executable, "install"] + args))
