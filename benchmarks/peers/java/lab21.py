"""benchmarks/peers/java/lab21.py - the lab's JDK 21 targets, java21-fixed and java21-virtual.

benchmarks/load.py imports this for `--peers java21`: Example.java (the seed's first article,
the same source as the JDK 17 row, which keeps its name java-fixed) on Debian 13's OpenJDK 21
with THREAD_TYPE=fixed (Executors.newFixedThreadPool(200)) and THREAD_TYPE=virtual (a virtual
thread per task). run21 installs the JDK (benchmarks/peers/java/jdk21, cached) and compiles;
a failure there ends the run with the reason (SystemExit): a requested peer is never skipped
quietly. Each target's command is the jdk21 wrapper, which execs trixie's loader on the JVM:
one process, as the JDK 17 target.
"""
import os
import shlex
import subprocess

import peer21


def targets(lab):
    """[java21-fixed, java21-virtual] as lab.Target (port unset); SystemExit when JDK 21 or
    javac fails."""
    kv = peer21.compiled(peer21.RUN21, "java21")
    java, cp = kv["java"], kv["cp"]
    ver = subprocess.run([java, "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    ver = ver.splitlines()[0].split('"')[1] if '"' in ver else "21"
    jdk = os.path.dirname(os.path.dirname(java))  # the jdk21 cache: the JDK and the libraries it runs on
    size, build_s = lab.human_bytes(lab.dir_bytes(jdk)), float(kv["javac_s"])
    out = []
    for name, tt, what in (("java21-fixed", "fixed", "Executors.newFixedThreadPool(200)"),
                           ("java21-virtual", "virtual", "a virtual thread per task")):
        out.append(lab.Target(
            name=name, kind="java", env={"THREAD_TYPE": tt},
            cmd=[java] + shlex.split(os.environ.get("JAVA_OPTS", "")) + ["-cp", cp, "Example"],
            build_s=build_s, build="%.1f s (javac)" % build_s, artifact_bytes=int(kv["class_bytes"]),
            artifact_note="+ %s JDK 21 (Debian 13's, with its libc)" % size,
            note="com.sun.net.httpserver, %s, INFO log per request, OpenJDK %s (Debian 13's "
                 "openjdk-21-jdk-headless through its own ld-linux, benchmarks/peers/java/jdk21), "
                 "THREAD_TYPE=%s, untuned JVM (as the seed ran it)" % (what, ver, tt)))
    return out
