# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Compute API credentials of the controller-side actions: the inventory plugin's, by default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  auth_kind:
    description:
      - How to obtain credentials, as the C(gpudirect.gcp.gce_gpu) inventory plugin does. Default - E(GCP_AUTH_KIND),
        else V(application).
    type: str
    choices: [application, serviceaccount, accesstoken]
  service_account_file:
    description: Service account key file, for O(auth_kind=serviceaccount). Default - E(GCP_SERVICE_ACCOUNT_FILE).
    type: path
  service_account_contents:
    description: The service account key itself, for O(auth_kind=serviceaccount).
    type: raw
  access_token:
    description: An OAuth2 access token, for O(auth_kind=accesstoken). Default - E(GCP_ACCESS_TOKEN).
    type: str
  impersonate_service_account:
    description: Email of a service account to impersonate.
    type: str
  api_endpoint:
    description: Base URL of the Compute Engine API. Default - E(GCP_COMPUTE_API_ENDPOINT), else the public one.
    type: str
  timeout:
    description: Seconds to wait for each answer.
    type: int
    default: 30
"""
