#!/usr/bin/env bash
# run.sh starts a throw-away Neo4j 5 Community (Launcher.java, artifacts through Maven) on a
# free loopback port, runs the command given with SALIENCE_NEO4J_URI pointing at it, then
# stops Neo4j and removes its data. With no command it prints the URI and keeps Neo4j up
# until interrupted.
#
#   scripts/neo4j/run.sh go test ./store/neo4j/...
#
# Environment: SALIENCE_M2 is the Maven local repository (default ~/.m2/repository; CI
# caches it), NEO4J_JAVA_OPTS the JVM options (default -Xmx1g), NEO4J_START_TIMEOUT the
# seconds to wait for Bolt (default 180), NEO4J_VERSION another Neo4j than pom.xml's (the
# calendar versions, 2025.01 and later, need Java 21 or later: NEO4J_JAVA names its java,
# or the first such JDK under /usr/lib/jvm is used).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
m2="${SALIENCE_M2:-$HOME/.m2/repository}"
java_opts="${NEO4J_JAVA_OPTS:--Xmx1g}"
timeout="${NEO4J_START_TIMEOUT:-180}"

version="${NEO4J_VERSION:-}"
java="${NEO4J_JAVA:-java}"

# java_major prints the major version of the java given, 0 when it does not run.
java_major() {
  "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1 | grep . || echo 0
}
case "$version" in
20*)
  if [ -z "${NEO4J_JAVA:-}" ] && [ "$(java_major java)" -lt 21 ]; then
    for j in /usr/lib/jvm/*/bin/java; do
      if [ -x "$j" ] && [ "$(java_major "$j")" -ge 21 ]; then java="$j"; break; fi
    done
  fi
  [ "$(java_major "$java")" -ge 21 ] || { echo "neo4j: Neo4j $version needs Java 21 or later (set NEO4J_JAVA)" >&2; exit 1; }
  ;;
esac
command -v "$java" >/dev/null || { echo "neo4j: java (17 or later) is required" >&2; exit 1; }
command -v mvn >/dev/null || { echo "neo4j: mvn is required to fetch Neo4j" >&2; exit 1; }

# The class path is resolved once per pom.xml and version; Maven downloads the artifacts the
# first time.
mkdir -p "$here/target"
cp_file="$here/target/classpath${version:+-$version}.txt"
if [ ! -s "$cp_file" ] || [ "$here/pom.xml" -nt "$cp_file" ]; then
  echo "neo4j: resolving Neo4j ${version:-of pom.xml} through Maven (first run downloads it)..." >&2
  mvn -B -q -f "$here/pom.xml" -Dmaven.repo.local="$m2" ${version:+-Dneo4j.version="$version"} \
    dependency:build-classpath -Dmdep.outputFile="$cp_file.tmp" >&2
  mv "$cp_file.tmp" "$cp_file"
fi

home="$(mktemp -d "${TMPDIR:-/tmp}/salience-neo4j.XXXXXX")"
log="$home/launcher.log"
: >"$log" # exists before the loop reads it (the background redirection may come later)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    # A clean shutdown takes a few seconds; give it up to 60 before forcing.
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$home"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC2086
"$java" $java_opts -cp "$(cat "$cp_file")" "$here/Launcher.java" "$home/dbms" >"$log" 2>&1 &
pid=$!

port=""
for _ in $(seq 1 "$timeout"); do
  port="$(sed -n 's/^BOLT_PORT=\([0-9]*\)$/\1/p' "$log" | head -n1 || true)"
  [ -n "$port" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "neo4j: the launcher exited; its output:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 1
done
if [ -z "$port" ]; then
  echo "neo4j: Bolt did not come up within ${timeout}s; launcher output:" >&2
  cat "$log" >&2
  exit 1
fi

export SALIENCE_NEO4J_URI="bolt://127.0.0.1:$port"
echo "neo4j: Neo4j ${version:-5} Community is up at $SALIENCE_NEO4J_URI" >&2
if [ "$#" -eq 0 ]; then
  echo "neo4j: press Ctrl-C to stop it" >&2
  wait "$pid"
  exit $?
fi
set +e
"$@"
status=$?
set -e
exit "$status"
