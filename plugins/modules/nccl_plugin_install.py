#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_plugin_install
short_description: Install a GPUDirect NCCL net plugin from its installer image, once per version
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Pulls the plugin installer image (pinned tag, optionally pinned digest) with the node's container engine,
    runs C(<engine> run --rm --name nccl-installer --network=host -v HOST:CONTAINER IMAGE INSTALL_ARGS),
    checks that the expected files exist and records image, tag and digest in O(record_path).
  - The record also holds the sha256 of every file the installer left (a manifest).
  - When the record names the same image, tag (and digest, if pinned) and every file is present and unchanged,
    nothing runs. Any other version, or a missing or modified file, runs the installer again.
options:
  engine:
    description: Path or name of the container engine command (see M(gpudirect.gcp.container_engine_info)).
    type: str
    required: true
  image:
    description: Installer image without tag.
    type: str
    required: true
  tag:
    description: Installer image tag (the plugin version).
    type: str
    required: true
  digest:
    description: C(sha256:...) digest that pins the image; the pull uses it and the install fails on a mismatch.
    type: str
  install_args:
    description: Arguments to the image's entrypoint.
    type: list
    elements: str
    default: [install]
  volumes:
    description: Host path to container path mounts for the installer.
    type: dict
    default: {"/var/lib": "/var/lib"}
  files_dir:
    description: Directory where O(files) must appear.
    type: path
    required: true
  files:
    description: Files (relative to O(files_dir)) the installer must produce.
    type: list
    elements: str
    required: true
  record_path:
    description: Where the installed-version record is kept.
    type: path
    required: true
  container_name:
    description: Name of the installer container.
    type: str
    default: nccl-installer
  force:
    description: Run the installer even when the record says this version is installed.
    type: bool
    default: false
notes:
  - Commands are run as argument lists, never through a shell.
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the installer would run, with a diff of the record; runs nothing.
  diff_mode:
    support: full
    details: The diff is the installed-version record before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Install the TCPXO plugin v1.0.17
  gpudirect.gcp.nccl_plugin_install:
    engine: /usr/bin/docker
    image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev
    tag: v1.0.17
    install_args: [install, --install-nccl]
    files_dir: /var/lib/tcpxo/lib64
    files: [libnccl-net.so, nccl-env-profile.sh]
    record_path: /var/lib/tcpxo/.gpudirect-installed
"""

RETURN = r"""
record:
  description: The installed version after the run (image, tag, digest, files).
  returned: always
  type: dict
previous:
  description: The record found before the run, or null.
  returned: always
  type: dict
missing_before:
  description: Expected files that were missing before the run.
  returned: always
  type: list
  elements: str
modified_before:
  description: Files whose sha256 differed from the record's manifest before the run.
  returned: always
  type: list
  elements: str
installer_output:
  description: Last lines the installer printed (empty when it did not run).
  returned: always
  type: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as ce
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer as pi
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(
        dict(
            engine=dict(type="str", required=True),
            image=dict(type="str", required=True),
            tag=dict(type="str", required=True),
            digest=dict(type="str"),
            install_args=dict(type="list", elements="str", default=["install"]),
            volumes=dict(type="dict", default={"/var/lib": "/var/lib"}),
            files_dir=dict(type="path", required=True),
            files=dict(type="list", elements="str", required=True),
            record_path=dict(type="path", required=True),
            container_name=dict(type="str", default="nccl-installer"),
            force=dict(type="bool", default=False),
        ),
    )
    p = gm.params
    try:
        ce.image_ref(p["image"], p["tag"], p["digest"])
    except ce.EngineError as exc:
        gm.fail(str(exc))
    previous = pi.read_record(p["record_path"])
    missing = pi.missing_files(p["files_dir"], p["files"])
    modified = pi.modified_files(previous, p["files_dir"])
    wanted = {"image": p["image"], "tag": p["tag"], "digest": p["digest"] or (previous or {}).get("digest")}
    result = dict(changed=False, previous=pi.public(previous), missing_before=missing, modified_before=modified,
                  installer_output="", record=pi.public(previous))
    if pi.up_to_date(previous, p["image"], p["tag"], p["digest"]) and not missing and not modified \
            and not p["force"]:
        gm.exit(**result)

    result["changed"] = True
    before = "%s\n" % gm.jsonify(pi.public(previous)) if previous else ""
    if gm.check_mode:
        result["diff"] = gm.diff(before, "%s\n" % gm.jsonify(wanted), p["record_path"])
        gm.exit(**result)

    engine = gm.executable(p["engine"])
    parent = os.path.dirname(p["record_path"])
    try:
        record, output = pi.install(gm.run, engine, p["image"], p["tag"], p["digest"], p["install_args"],
                                    p["volumes"], p["files_dir"], p["files"], name=p["container_name"])
        if not os.path.isdir(parent):
            os.makedirs(parent)
        pi.write_record(p["record_path"], record)
    except (pi.InstallError, ce.EngineError, OSError) as exc:
        gm.fail("nccl_plugin_install: %s" % exc, **result)
    result.update(record=pi.public(record), installer_output=output[-4000:],
                  diff=gm.diff(before, "%s\n" % gm.jsonify(pi.public(record)), p["record_path"]))
    gm.exit(**result)


if __name__ == "__main__":
    main()
