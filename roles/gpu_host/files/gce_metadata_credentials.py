# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Docker credential helper (gpudirect.gcp): Artifact Registry credentials from the VM's service account.

docker and podman run `docker-credential-gce-metadata get` with a registry on
stdin when their config's credHelpers names this helper for it.  The answer is
a short-lived access token from the GCE metadata server with the user name
Google documents for tokens (oauth2accesstoken); nothing is stored, so no
long-lived secret is ever written, and the token goes to the engine only.
Registries and the metadata host come from /etc/gpudirect/registry-auth.json
(GPUDIRECT_REGISTRY_AUTH_CONFIG names another file).
"""

import json
import os
import sys
import urllib.error
import urllib.request

CONFIG = os.environ.get("GPUDIRECT_REGISTRY_AUTH_CONFIG", "/etc/gpudirect/registry-auth.json")
TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"


def _host(server):
    server = server.strip()
    for scheme in ("https://", "http://"):
        if server.startswith(scheme):
            server = server[len(scheme):]
    return server.split("/", 1)[0]


def get(server):
    with open(CONFIG) as fh:
        config = json.load(fh)
    if _host(server) not in config.get("registries", []):
        print("credentials not found in native keychain")
        return 1
    url = "http://%s%s" % (config.get("metadata_host", "metadata.google.internal"), TOKEN_PATH)
    request = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            token = json.load(resp)["access_token"]
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        # the error names the metadata server, never a token
        print("docker-credential-gce-metadata: no token from the metadata server %s: %s" % (url, exc))
        return 1
    print(json.dumps({"ServerURL": server.strip(), "Username": "oauth2accesstoken", "Secret": token}))
    return 0


def main(argv):
    action = argv[1] if len(argv) > 1 else ""
    if action == "get":
        return get(sys.stdin.read())
    if action in ("store", "erase"):
        sys.stdin.read()
        return 0  # tokens are fetched when needed: nothing is kept
    if action == "list":
        print("{}")
        return 0
    print("usage: docker-credential-gce-metadata get|store|erase|list")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
