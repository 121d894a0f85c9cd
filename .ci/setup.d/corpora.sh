#!/usr/bin/env bash
# The real corpora the git-oracle tests read (tests/it/series_versions.rs: ripgrep's history, compared with
# `git range-diff` and `git log -p`). They live beside the checkout in ../shared/corpora and are never copied
# into the repository. Under CI a missing corpus fails here, before the run; elsewhere the tests that need
# it are counted as skipped and ./test.sh names them at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle=../shared/corpora/ripgrep.bundle
if [ -f "$bundle" ]; then
    exit 0
fi
if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
    echo "$bundle is missing: CI must provide the ripgrep corpus (see ../shared/corpora/README.md)" >&2
    exit 1
fi
echo "note: $bundle is missing; the tests that need it will be skipped and counted"
