#!/usr/bin/env bash
# Make sure the tools the report tests use are on PATH: Graphviz's `dot` (SVG/PNG of trace
# graphs) and Chromium (the HTML report test loads the page in a headless browser; the
# `mc explore` tests drive it with Playwright, given this executable: Playwright downloads no
# browser of its own). Installs Debian's `graphviz` and `chromium` if either is missing.
# `make check` does not need them.
set -euo pipefail

missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  missing+=(chromium)
fi
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "ensure-test-tools: installing ${missing[*]}" >&2
# fonts-dejavu-core: chromium renders text with it when the image has no other fonts.
bash "$(dirname "$0")/apt-install.sh" "${missing[@]}" fonts-dejavu-core
dot -V
