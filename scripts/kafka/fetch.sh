#!/usr/bin/env bash
# Copy Apache Kafka (scripts/kafka/pom.xml) with its dependencies from Maven Central into
# scripts/kafka/lib/, installing Debian's maven first if `mvn` is missing. `make kafka-lib` runs it
# only when the pom changed: the jars (and ~/.m2) are the cache between runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../ensure-java.sh"
if ! command -v mvn >/dev/null 2>&1; then
  echo "kafka/fetch.sh: mvn not found; installing Debian's maven" >&2
  bash "$here/../apt-install.sh" maven
fi
rm -rf "$here/lib"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$here/lib"
touch "$here/lib/.stamp"
