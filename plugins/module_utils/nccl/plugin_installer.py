# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running a GPUDirect NCCL plugin installer image and recording what it installed.

The record (JSON: image, tag, digest, files, and a manifest of every file's
sha256) sits next to the installed plugin.  The same image, tag (and digest,
when pinned) with every expected file present and unchanged means nothing to
do; anything else means the installer runs again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as ce
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import write_atomic

RECORD_KEYS = ("image", "tag", "digest")
# The record's name in the plugin's install directory (nccl_plugin_record_file's default)
RECORD_FILE = ".gpudirect-installed"


class InstallError(Exception):
    """The installer could not be pulled or run, or did not produce the expected files."""


def read_record(path):
    """The recorded install, or None when there is none or it is unreadable."""
    return read_record_checked(path)[0]


def read_record_checked(path):
    """(record, problem): the record and None; (None, None) when there is no record; (None, why in a few
    words) when the file is there but is no record (cut short, not JSON, or not the shape one is)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except (IOError, OSError):
        return None, None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, "not JSON (%s)" % (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if not isinstance(data, dict):
        return None, "not a JSON object"
    manifest = data.get("manifest")
    if manifest is not None and not (isinstance(manifest, list) and
                                     all(isinstance(e, dict) and isinstance(e.get("path"), str) for e in manifest)):
        return None, "its manifest is not a list of {path, sha256} entries"
    return data, None


def public(record):
    """The record's image, tag and digest (what modules return), or None without a record."""
    return dict((k, record.get(k)) for k in RECORD_KEYS) if record else None


def write_record(path, record):
    write_atomic(path, json.dumps(record, indent=2, sort_keys=True) + "\n", 0o644)


def missing_files(files_dir, files, exists=os.path.exists):
    return [f for f in files if not exists(os.path.join(files_dir, f))]


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest(files_dir, files):
    """[{path, sha256}] of the expected files that exist, relative to files_dir."""
    out = []
    for name in files:
        path = os.path.join(files_dir, name)
        if os.path.isfile(path):
            out.append({"path": name, "sha256": sha256(path)})
    return out


def modified_files(record, files_dir):
    """Files whose content differs from what the record's manifest says was installed."""
    out = []
    for entry in (record or {}).get("manifest") or []:
        path = os.path.join(files_dir, entry.get("path", ""))
        if os.path.isfile(path) and sha256(path) != entry.get("sha256"):
            out.append(entry["path"])
    return out


def up_to_date(record, image, tag, digest):
    """Whether a record says this exact version is installed (digest compared only when pinned)."""
    if not record:
        return False
    if record.get("image") != image or record.get("tag") != tag:
        return False
    return not digest or record.get("digest") == digest


def _tail(text, lines=20):
    return "\n".join((text or "").strip().splitlines()[-lines:])


def install(run, engine, image, tag, digest, install_args, volumes, files_dir, files, name="nccl-installer",
            exists=os.path.exists, pull=True, makedirs=os.makedirs):
    """Pull, run the installer, check its files. run(argv) -> (rc, out, err).

    Returns the new record (image, tag, digest actually pulled, files) and the installer output.
    """
    ref = ce.image_ref(image, tag, digest)
    # a pinned tag (or digest) already on the node is that version: pull only when it is missing
    rc, out, err = run(ce.image_digest_argv(engine, ref))
    if rc != 0 and pull:
        rc, out, err = run(ce.pull_argv(engine, ref))
        if rc != 0:
            raise InstallError("pulling %s failed (rc=%d): %s" % (ref, rc, _tail(err or out, 5)))
        rc, out, err = run(ce.image_digest_argv(engine, ref))
    if rc != 0:
        raise InstallError("image %s is not on the node (rc=%d): %s" % (ref, rc, _tail(err or out, 5)))
    pulled = ce.parse_repo_digest(out, image)
    if digest and pulled and pulled != digest:
        raise InstallError("image %s has digest %s, not the pinned %s" % (ref, pulled, digest))
    # docker creates a missing host side of -v, podman refuses it: the install
    # directory (gIB's /usr/local/gib) must exist before the installer runs
    for host in sorted(volumes):
        if not exists(host):
            makedirs(host)
    # a container left by an interrupted run would block --name
    run(ce.remove_argv(engine, name))
    rc, out, err = run(ce.installer_argv(engine, name, ref, volumes, install_args))
    output = (out or "") + (err or "")
    if rc != 0:
        raise InstallError("installer %s %s exited %d; last output:\n%s" % (ref, " ".join(install_args), rc, _tail(output)))
    missing = missing_files(files_dir, files, exists)
    if missing:
        raise InstallError("installer %s ran but %s lacks %s; last output:\n%s"
                           % (ref, files_dir, ", ".join(missing), _tail(output)))
    record = {"image": image, "tag": tag, "digest": digest or pulled, "files": list(files),
              "manifest": manifest(files_dir, files)}
    return record, output
