#!/usr/bin/env bash
# Make sure Java 17 or newer is on PATH (Spark needs it): install Debian's
# openjdk-17-jre-headless if it is missing or older.
set -euo pipefail

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ] 2>/dev/null; then
  exit 0
fi

echo "ensure-java: Java 17+ not found; installing openjdk-17-jre-headless" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-java: need root (or sudo) to install Java 17" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends openjdk-17-jre-headless
java -version
