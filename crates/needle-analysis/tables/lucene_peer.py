"""Compiles one of this folder's Java programs against the Lucene peer's jars
(bench/peers/lucene, built first if need be, with the JDK OpenSearch's guide
uses here) and runs it on some input: how the `*_cases.py` recorders ask
Lucene for its answers."""

import glob
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "../../../bench/peers/lucene")


def run(program, stdin):
    """`program` (a class of this folder, `Program.java`) run with `stdin` (bytes): its output."""
    subprocess.run(["bash", os.path.join(PEER, "build.sh")], check=True, stdout=subprocess.DEVNULL)
    java = open(os.path.join(PEER, "target/java-path")).read().strip()
    ecj = sorted(glob.glob(os.path.join(PEER, "target/tools/ecj-*.jar")))[0]
    cp = ":".join(sorted(glob.glob(os.path.join(PEER, "target/lib/*.jar"))))
    with tempfile.TemporaryDirectory() as build:
        subprocess.run([java, "-jar", ecj, "-21", "-encoding", "UTF-8", "-nowarn", "-cp", cp, "-d", build,
                        os.path.join(HERE, program + ".java")], check=True)
        done = subprocess.run([java, "-cp", build + ":" + cp, program], input=stdin, capture_output=True, check=True)
    return done.stdout
