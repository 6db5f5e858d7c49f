# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gcs_upload: a report directory to Cloud Storage from the controller (documented in
plugins/modules/gcs_upload.py; the work is plugin_utils/gce/gcs_upload.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import GpuAction, with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gcs_upload


ARGUMENT_SPEC = with_gce_auth(dict(
    src=dict(type="path", required=True),
    bucket=dict(type="str", required=True),
    prefix=dict(type="str", default="gpudirect-gcp/reports"),
    storage_endpoint=dict(type="str"),
))


class ActionModule(GpuAction):

    MODULE = "gcs_upload"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (gce_api.GceApiError, gcs_upload.UploadError)

    def act(self, result, args, task_vars):
        endpoint = self.gce_auth(result, args, endpoint=args.get("storage_endpoint")
                                 or os.environ.get("GCP_STORAGE_API_ENDPOINT") or gcs_upload.DEFAULT_ENDPOINT)
        bucket = gcs_upload.valid_bucket(args["bucket"])
        # a dry run may come before the directory it would upload exists
        objects = ([] if self.check_mode and not os.path.exists(args["src"])
                   else gcs_upload.plan(args["src"], args["prefix"]))
        result.update(bucket=bucket, dry_run=self.check_mode)
        if self.check_mode:
            planned = [dict(name=o["name"], size=0, generation="", **gcs_upload.links(bucket, o["name"]))
                       for o in objects]
            result.update(changed=bool(planned), objects=make_unsafe(planned),
                          msg="dry run: would upload %d object(s) to bucket %s" % (len(planned), bucket))
            return result
        with self.gce_client(args, endpoint, scopes=gcs_upload.WRITE_SCOPES) as client:
            written = gcs_upload.upload_all(client, endpoint, bucket, objects)
        # names come from files and the API: never templated again
        result.update(changed=bool(written), objects=make_unsafe(written),
                      msg=make_unsafe("uploaded %d object(s) to gs://%s/%s" % (
                          len(written), bucket, gcs_upload.valid_prefix(args["prefix"]))))
        return result
