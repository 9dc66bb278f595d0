#!/usr/bin/env bash
# Installs what jqmaster needs from Debian 12's packages, only what is missing.
#   scripts/install-deps.sh            build + test dependencies (the default)
#   scripts/install-deps.sh --runtime  only what the built daemon needs to run (Docker's last stage)
# The one list of Debian packages for the README, .ci/run and docker/Dockerfile.
set -euo pipefail

BUILD_PACKAGES=(
  g++ cmake ninja-build pkg-config ccache clang-14 libfuzzer-14-dev
  libboost-dev libboost-system-dev libhiredis-dev libmsgpack-cxx-dev nlohmann-json3-dev
  libjemalloc-dev libhowardhinnant-date-dev tzdata libssl-dev openssl
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev catch2
  redis-server redis-tools
  python3 python3-msgpack curl ca-certificates
  nodejs npm python3-jsonschema python3-yaml python3-prometheus-client
  chromium
  wrk
)
RUNTIME_PACKAGES=(
  libhiredis0.14 libyaml-cpp0.7 libspdlog1.10 libfmt9 libjemalloc2 libdate-tz3 tzdata libssl3
  redis-server
  ca-certificates
  curl
  libssl3
)

packages=("${BUILD_PACKAGES[@]}")
if [[ "${1:-}" == "--runtime" ]]; then packages=("${RUNTIME_PACKAGES[@]}"); fi

# What installed packages provide counts too (NodeSource's nodejs provides npm, and Debian's npm
# package conflicts with it).
provided=$(dpkg-query -W -f='${db:Status-Abbrev}${Provides}\n' 2>/dev/null |
  sed -n 's/^ii *//p' | tr ',' '\n' | sed 's/ *(.*//; s/^ *//')
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" &&
     ! grep -qxF "$p" <<<"$provided"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
