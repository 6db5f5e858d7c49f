#!/usr/bin/env bash
# Renders the documentation of every plugin, module and role of the installed
# collection with ansible-doc, then lints it as a docsite build reads it
# (antsibull-docs lint-collection-docs) with the collections it depends on
# beside it, as a docsite build has them (some references resolve only then);
# fails when one does not render or lint.
set -euo pipefail
installed="$1"
# the collections galaxy.yml depends on: those of the `ansible` package this
# ansible-doc comes with
deps=$(python -c 'import ansible_collections, os; print(os.path.dirname(ansible_collections.__path__[0]))')
export ANSIBLE_COLLECTIONS_PATH="$installed:$deps"
coll="$installed/ansible_collections/gpudirect/gcp"
fail=0
# One ansible-doc run per plugin type (each run costs about a second of start-up); only when a run
# fails, or warns about one of them (a plugin it cannot find is a warning and exit status 0), are
# its plugins rendered one by one, to name the one at fault.
doc_ok() {
  ansible-doc -t "$@" >/dev/null 2>"$installed/doc-err.txt" && ! grep -q 'gpudirect\.gcp' "$installed/doc-err.txt"
}
check_type() {
  local type="$1"; shift
  [ "$#" -gt 0 ] || return 0
  if doc_ok "$type" "$@"; then
    echo "ansible-doc -t $type: $# ok"
    return 0
  fi
  local name
  for name in "$@"; do
    if doc_ok "$type" "$name"; then
      echo "ansible-doc -t $type $name: ok"
    else
      echo "ansible-doc -t $type $name: FAILED: $(head -c 400 "$installed/doc-err.txt")"
      fail=1
    fi
  done
}
for kind in modules inventory lookup filter; do
  dir="$coll/plugins/$kind"
  [ -d "$dir" ] || continue
  # filters are documented one per *.yml file; other plugins in their *.py
  ext=py
  [ "$kind" = filter ] && ext=yml
  names=()
  for f in "$dir"/*."$ext"; do
    [ -e "$f" ] || continue
    name=$(basename "${f%.*}")
    [ "$name" = __init__ ] || names+=("gpudirect.gcp.$name")
  done
  check_type "${kind%s}" ${names[@]+"${names[@]}"}
done
roles=()
for role in "$coll"/roles/*/; do
  name=$(basename "$role")
  [[ $name == _* ]] || roles+=("gpudirect.gcp.$name")
done
check_type role ${roles[@]+"${roles[@]}"}
if (cd "$coll" && antsibull-docs lint-collection-docs --plugin-docs . > "$installed/docs-lint.txt" 2>&1); then
  echo "antsibull-docs lint-collection-docs: ok"
else
  echo "antsibull-docs lint-collection-docs: FAILED:"
  grep -v '^ ' "$installed/docs-lint.txt" | head -20
  fail=1
fi
exit $fail
