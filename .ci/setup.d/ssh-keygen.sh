#!/usr/bin/env bash
# ssh-keygen for the signing interop tests (tests/it/sign.rs): `ssh-keygen -Y verify` is the reference
# reader of the SSHSIG signatures git-jules writes on events.
set -euo pipefail
if ! command -v ssh-keygen >/dev/null; then
    "$(dirname "$0")/../apt-install" openssh-client
fi
command -v ssh-keygen >/dev/null
