#!/usr/bin/python3
"""knative/tools/seccompprofile.py - the io-uring overlay's SeccompProfile
(knative/overlays/io-uring/seccompprofile.yaml), generated from container/seccomp.json.

Usage: knative/tools/seccompprofile.py (writes the file). One source: container/seccomp-gen runs this
whenever it writes container/seccomp.json, and tests/knative/validate (importing it as
primedlab.seccompprofile: the package spans knative/tools) fails when the file is not what this
writes.

container/seccomp.json is in the runtimes' own format (moby / containers-common): rules may
apply only with some capabilities (`includes.caps` / `excludes.caps`) or on some node
architectures (`includes.arches`, compared with the node's GOARCH), the default errno is set by
`defaultErrnoRet`, and `archMap` lists each native architecture with its compat ones. A
SeccompProfile (security-profiles-operator.x-k8s.io/v1) is the flat OCI form: one list of
architectures, unconditional rules, no default errno. So the conversion resolves the
conditions for what this container is: no capabilities (drop ALL) on an amd64 or arm64 node,
and keeps every rule that applies on either. A rule kept for one architecture names syscalls
that exist only there (arch_prctl and modify_ldt on x86; arm_fadvise64_64, cacheflush, set_tls
... on arm), and the runtimes skip names an architecture lacks, so each node gets what
container/seccomp.json gives it. What cannot be carried over: `defaultErrnoRet` (ENOSYS), so a
syscall outside the lists fails with EPERM (the runtimes' default errno) instead of ENOSYS.

Owns: the conversion (seccomp_profile_object, seccomp_rules_for, seccomp_architectures), the
file's text (seccompprofile_text), which tests/knative/validate compares byte for byte and rule by
rule, and writing it to PROFILE_YAML (main). Never judges a file. Needs PyYAML (python3-yaml).
"""
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECCOMP_JSON = os.path.join(ROOT, "container", "seccomp.json")
PROFILE_YAML = os.path.join(ROOT, "knative", "overlays", "io-uring", "seccompprofile.yaml")
# The node architectures the profile serves (Go's GOARCH names, which the runtimes compare with a
# rule's `includes.arches`) and the seccomp architecture each one is in archMap.
NODE_ARCHES = {"amd64": "SCMP_ARCH_X86_64", "arm64": "SCMP_ARCH_AARCH64"}
# The container's capabilities: the Service drops ALL and adds none (tests/knative/validate's
# knative_rules checks it).
POD_CAPS = frozenset()


class SeccompError(Exception):
    pass


def seccomp_rule(rule):
    """One rule in the SeccompProfile's form (names, action, errnoRet, args), canonical."""
    out = {"names": sorted(rule["names"]), "action": rule["action"]}
    if rule.get("errnoRet") is not None:
        out["errnoRet"] = rule["errnoRet"]
    args = []
    for a in rule.get("args") or []:
        x = {"index": a["index"], "op": a["op"]}
        for k in ("value", "valueTwo"):           # 0 is the default; the operator omits it too
            if a.get(k):
                x[k] = a[k]
        args.append(x)
    if args:
        out["args"] = args
    return out


def seccomp_rules_for(prof, goarch, caps=POD_CAPS):
    """The rules of a runtime-format profile that apply on a node of architecture goarch to a
    container holding caps, each in the SeccompProfile's form, in order."""
    out = []
    for rule in prof.get("syscalls", []):
        inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
        unknown = (set(inc) | set(exc)) - {"arches", "caps"}
        if unknown:
            raise SeccompError(f"rule for {rule['names'][:3]}: conditions {sorted(unknown)} are not "
                               "converted (extend knative/tools/seccompprofile.py)")
        if inc.get("arches") and goarch not in inc["arches"]:
            continue
        if inc.get("caps") and not set(inc["caps"]) <= caps:
            continue
        if goarch in (exc.get("arches") or ()) or set(exc.get("caps") or ()) & caps:
            continue
        out.append(seccomp_rule(rule))
    return out


def seccomp_architectures(prof):
    """The SeccompProfile's architectures: each node architecture's archMap entry, compat included."""
    out = []
    for goarch, arch in NODE_ARCHES.items():
        entry = [e for e in prof.get("archMap", []) if e["architecture"] == arch]
        if len(entry) != 1:
            raise SeccompError(f"archMap has no single entry for {arch} ({goarch})")
        for a in [arch] + entry[0].get("subArchitectures", []):
            if a not in out:
                out.append(a)
    return out


def seccomp_profile_object(prof):
    """The SeccompProfile for container/seccomp.json's contents (a dict)."""
    if prof.get("defaultErrnoRet") not in (None, 38):
        raise SeccompError(f"defaultErrnoRet {prof['defaultErrnoRet']}: the header "
                           "seccompprofile_text writes speaks of ENOSYS (38); update it")
    rules = []
    for goarch in NODE_ARCHES:
        for r in seccomp_rules_for(prof, goarch):
            if r not in rules:
                rules.append(r)
    return {
        "apiVersion": "security-profiles-operator.x-k8s.io/v1",
        "kind": "SeccompProfile",
        # Cluster-scoped: the operator writes it to every node as
        # /var/lib/kubelet/seccomp/operator/<name>.json. The overlay's nameSuffix makes this
        # primed-io-uring, which the Service's localhostProfile names.
        "metadata": {"name": "primed",
                     "labels": {"app.kubernetes.io/name": "primed", "app.kubernetes.io/part-of": "primed"}},
        "spec": {"defaultAction": prof["defaultAction"], "architectures": seccomp_architectures(prof),
                 "syscalls": rules},
    }


def seccompprofile_text(prof):
    obj = seccomp_profile_object(prof)
    # Block style, one syscall name a line: a diff of container/seccomp.json shows here as such.
    body = yaml.safe_dump(obj, sort_keys=False, width=100, default_flow_style=False)
    return ("# Generated from container/seccomp.json by\n"
            "#   knative/tools/seccompprofile.py   (container/seccomp-gen runs it)\n"
            "# Edit container/seccomp.json (or container/seccomp-gen), not this file: the validation\n"
            "# fails when they differ.\n"
            "#\n"
            "# The Security Profiles Operator (kubernetes-sigs) installs this on every node as\n"
            "# /var/lib/kubelet/seccomp/operator/primed-io-uring.json (the name after the overlay's\n"
            "# nameSuffix). It is container/seccomp.json for a container without capabilities on an\n"
            "# amd64 or arm64 node: the capability and architecture conditions resolved, as the\n"
            "# runtime would resolve them. Not carried over: defaultErrnoRet (a SeccompProfile has no\n"
            "# such field), so a syscall outside these lists fails with EPERM, not ENOSYS.\n"
            + body)


def main(argv):
    if len(argv) > 1:
        print(__doc__.strip(), file=sys.stderr if argv[1] not in ("-h", "--help") else sys.stdout)
        return 0 if argv[1] in ("-h", "--help") else 2
    with open(SECCOMP_JSON) as f:
        text = seccompprofile_text(json.load(f))
    with open(PROFILE_YAML, "w") as f:
        f.write(text)
    print(f"wrote {PROFILE_YAML}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
