#!/usr/bin/env bash
echo "make demo: the sandbox cluster is not yet available" >&2
exit 2
