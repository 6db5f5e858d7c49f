#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gcs_upload
short_description: Upload a run's report directory to a Cloud Storage bucket
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Uploads every regular file under O(src) from the controller to O(bucket) through the Cloud Storage JSON API,
    as objects named O(prefix)/<the directory's own name>/<path under it>, so each run keeps its folder; or
    one regular file (a job's evidence archive, the remediation audit), as O(prefix)/<its name>.
  - Reports written inside an AWX job's private directory are deleted with the job; uploaded, they outlive it, and
    the returned links go into the run's C(set_stats) summary.
  - Each object's MD5, as the API stored it, is compared with the file's.
  - Symbolic links are not followed.
  - In check mode nothing is sent; the result lists the objects that would be written (none when O(src) does not
    exist yet).
  - An action plugin; it runs on the controller whatever the task's host.
options:
  src:
    description: The directory to upload (for example the C(run_dir) a report module returned), or one regular file.
    type: path
    required: true
  bucket:
    description: Name of the bucket (not a C(gs://) URL).
    type: str
    required: true
  prefix:
    description: Object name prefix, without leading or trailing slashes.
    type: str
    default: gpudirect-gcp/reports
  storage_endpoint:
    description: Base URL of the Cloud Storage JSON API. Default - E(GCP_STORAGE_API_ENDPOINT), else the public one.
    type: str
extends_documentation_fragment:
  - gpudirect.gcp.gce_auth
notes:
  - The credentials are found as for the C(gpudirect.gcp.gce_gpu) inventory, and in an AWX job from its Google
    Compute Engine credential (E(GCE_CREDENTIALS_FILE_PATH)); they need C(storage.objects.create) on the bucket
    (for example C(roles/storage.objectCreator)). The scope requested is
    C(https://www.googleapis.com/auth/devstorage.read_write). O(api_endpoint) is not used.
  - An object written twice under one name is the same object, so a refused connection, HTTP 429 and 5xx answers
    are retried with backoff; any other failure ends the task in one line naming the bucket, object and cause.
attributes:
  check_mode:
    support: full
    description: A dry run - nothing is sent; the result lists the objects that would be written.
  diff_mode:
    support: none
    description: Nothing on a node changes.
  action:
    support: full
    description: Runs on the controller as an action plugin.
"""

EXAMPLES = r"""
- name: Keep the diagnosis report after the AWX job ends
  gpudirect.gcp.gcs_upload:
    src: "{{ diagnose_report.run_dir }}"
    bucket: my-gpu-reports
    prefix: clusters/train-a
  register: uploaded
"""

RETURN = r"""
bucket:
  description: The bucket.
  returned: always
  type: str
objects:
  description: Each object written (in check mode, that would be written), in name order.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The object name., type: str}
    size: {description: Bytes; 0 in check mode., type: int}
    generation: {description: The object generation the API wrote; empty in check mode., type: str}
    uri: {description: "The object as a gs:// URI.", type: str, sample: gs://my-gpu-reports/clusters/a/report.json}
    url: {description: The console's authenticated download URL., type: str}
dry_run:
  description: True in check mode, when nothing was sent.
  returned: always
  type: bool
"""
