# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # Authentication and endpoint options shared by the collection's Compute API users.
    DOCUMENTATION = r"""
options:
  auth_kind:
    description:
      - How to obtain credentials.
      - V(application) uses C(google.auth.default()), so Application Default Credentials,
        E(GOOGLE_APPLICATION_CREDENTIALS), workload identity and the metadata server all work.
      - V(serviceaccount) reads a service account key from O(service_account_file) or O(service_account_contents).
      - V(accesstoken) uses O(access_token) as a bearer token.
    type: str
    default: application
    choices: [application, serviceaccount, accesstoken]
    env:
      - name: GCP_AUTH_KIND
  service_account_file:
    description:
      - Path of a service account JSON key, for O(auth_kind=serviceaccount).
      - The variables AWX's Google Compute Engine credential sets are read, so an AWX inventory
        sourced from a project works without extra variables.
    type: path
    env:
      - name: GOOGLE_APPLICATION_CREDENTIALS
      - name: GCE_CREDENTIALS_FILE_PATH
      - name: GCP_SERVICE_ACCOUNT_FILE
  service_account_contents:
    description:
      - The service account JSON key itself (a string or a dict), for O(auth_kind=serviceaccount).
      - Wins over O(service_account_file).
    type: raw
    env:
      - name: GCP_SERVICE_ACCOUNT_CONTENTS
  access_token:
    description:
      - An OAuth2 access token, for O(auth_kind=accesstoken).
    type: str
    env:
      - name: GCP_ACCESS_TOKEN
  impersonate_service_account:
    description:
      - Email of a service account to impersonate with the credentials chosen by O(auth_kind).
      - The caller needs C(roles/iam.serviceAccountTokenCreator) on it.
    type: str
    env:
      - name: GCP_IMPERSONATE_SERVICE_ACCOUNT
  scopes:
    description:
      - OAuth scopes requested for the credentials.
    type: list
    elements: str
    default: ['https://www.googleapis.com/auth/compute.readonly']
    env:
      - name: GCP_SCOPES
  api_endpoint:
    description:
      - Base URL of the Compute Engine API; C(/compute/v1/projects/...) is appended.
      - Change it for Private Service Connect endpoints or a test server.
    type: str
    default: https://compute.googleapis.com
    env:
      - name: GCP_COMPUTE_API_ENDPOINT
  iam_endpoint:
    description:
      - Base URL of the IAM Credentials API, used with O(impersonate_service_account).
    type: str
    default: https://iamcredentials.googleapis.com
    env:
      - name: GCP_IAM_ENDPOINT
  timeout:
    description:
      - Seconds to wait for one HTTP response.
    type: int
    default: 30
    env:
      - name: GCP_GCE_GPU_TIMEOUT
  retries:
    description:
      - How many times one request is retried on HTTP 429, 500, 502, 503, 504 or a connection error,
        with exponential backoff and jitter; C(Retry-After) is honoured.
    type: int
    default: 8
    env:
      - name: GCP_GCE_GPU_RETRIES
  retry_max_time:
    description:
      - Upper bound, in seconds, on the time one request spends retrying.
    type: float
    default: 60
    env:
      - name: GCP_GCE_GPU_RETRY_MAX_TIME
requirements:
  - google-auth >= 2.20
  - requests >= 2.28
"""
