#!/usr/bin/env bash
# What `npm run check:image` needs besides the project's own dependencies: Debian's buildah (the
# image builder) and debootstrap (the base images). Not in scripts/install-system-deps.sh: the
# test suite does not need them.
set -euo pipefail
missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
