# Makes `ansible_collections.gpudirect.gcp` importable for pytest by linking
# this checkout into build/collections (the same link ansible.cfg uses).
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.join(ROOT, "build", "collections")
if not os.path.exists(os.path.join(COLLECTIONS, "ansible_collections", "gpudirect", "gcp")):
    subprocess.check_call([os.path.join(ROOT, "scripts", "link-collection.sh")])
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
os.environ.setdefault("ANSIBLE_CONFIG", os.path.join(ROOT, "ansible.cfg"))
