#!/usr/bin/env bash
# Regenerates src/tables/*.rs from Java and Lucene (GenerateTables.java), on
# the Java runtime and Lucene jars of the Lucene peer (bench/peers/lucene:
# the JDK OpenSearch's guide uses here). Run from anywhere:
#   bash crates/needle-analysis/tables/generate.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEER="$HERE/../../../bench/peers/lucene"
bash "$PEER/build.sh" > /dev/null
JAVA="$(cat "$PEER/target/java-path")"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
ECJ="$(ls "$PEER"/target/tools/ecj-*.jar | head -1)"
CP="$(ls "$PEER"/target/lib/*.jar | sort | paste -sd: -)"
"$JAVA" -jar "$ECJ" -21 -encoding UTF-8 -nowarn -cp "$CP" -d "$BUILD" "$HERE/GenerateTables.java"
mkdir -p "$HERE/../src/tables"
"$JAVA" -cp "$BUILD:$CP" GenerateTables "$HERE/../src/tables"
echo "wrote $(ls "$HERE/../src/tables")"
