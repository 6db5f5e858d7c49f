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
for kind in modules inventory lookup filter; do
  dir="$coll/plugins/$kind"
  [ -d "$dir" ] || continue
  type=${kind%s}
  # filters are documented one per *.yml file; other plugins in their *.py
  ext=py
  [ "$kind" = filter ] && ext=yml
  for f in "$dir"/*."$ext"; do
    [ -e "$f" ] || continue
    name=$(basename "${f%.*}")
    [ "$name" = __init__ ] && continue
    if ansible-doc -t "$type" "gpudirect.gcp.$name" >/dev/null 2>"$installed/doc-err.txt"; then
      echo "ansible-doc -t $type gpudirect.gcp.$name: ok"
    else
      echo "ansible-doc -t $type gpudirect.gcp.$name: FAILED: $(head -c 400 "$installed/doc-err.txt")"
      fail=1
    fi
  done
done
for role in "$coll"/roles/*/; do
  name=$(basename "$role")
  [[ $name == _* ]] && continue
  if ansible-doc -t role "gpudirect.gcp.$name" >/dev/null 2>"$installed/doc-err.txt"; then
    echo "ansible-doc -t role gpudirect.gcp.$name: ok"
  else
    echo "ansible-doc -t role gpudirect.gcp.$name: FAILED: $(head -c 400 "$installed/doc-err.txt")"; fail=1
  fi
done
if (cd "$coll" && antsibull-docs lint-collection-docs --plugin-docs . > "$installed/docs-lint.txt" 2>&1); then
  echo "antsibull-docs lint-collection-docs: ok"
else
  echo "antsibull-docs lint-collection-docs: FAILED:"
  grep -v '^ ' "$installed/docs-lint.txt" | head -20
  fail=1
fi
exit $fail
