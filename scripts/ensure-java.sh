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
bash "$(dirname "$0")/apt-install.sh" openjdk-17-jre-headless
java -version
