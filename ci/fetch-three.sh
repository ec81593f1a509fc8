#!/usr/bin/env bash
# Fetches three.js for the replay pages (reports/src/replay.rs) from its npm package, pinned, into
# reports/assets/vendor/three/ (not committed: 668 KB minified): build/three.min.js and LICENSE.
# r159 is the last release with a build that is not an ES module; Chromium does not load ES
# modules from file://, where the report must work. `npm pack` checks the package's integrity
# against the registry's. Idempotent: does nothing when the pinned version is already there.
#
#   bash ci/fetch-three.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.159.0
DEST=reports/assets/vendor/three
if [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$VERSION" ] && [ -f "$DEST/three.min.js" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "three@$VERSION" >/dev/null)
tar xzf "$tmp/three-$VERSION.tgz" -C "$tmp" package/build/three.min.js package/LICENSE
mkdir -p "$DEST"
cp "$tmp/package/build/three.min.js" "$tmp/package/LICENSE" "$DEST/"
echo "$VERSION" > "$DEST/VERSION"
echo "three.js $VERSION -> $DEST"
